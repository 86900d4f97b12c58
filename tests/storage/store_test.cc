#include "storage/store.h"

#include <rocksdb/db.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "codec/commit.h"
#include "codec/id.h"
#include "storage/format.h"
#include "sync/link.h"
#include "sync/random.h"
#include "sync/snapshot.h"
#include "tests/storage/temp_dir.h"
#include "tests/sync/editor.h"
#include "tests/tmpfs.h"

namespace aweft::storage {
namespace {

using aweft::testing::Tmpfs;

using codec::Reason;
using testing::TempDir;

Store OpenStore(const std::string& path, const Options& options = {}) {
  Result<Store> store = Store::Open(path, options);
  REQUIRE(store);
  return std::move(*store);
}

sync::Document& OpenDoc(Store& store, std::string_view name, Kind kind = Kind::kObject) {
  Result<sync::Document*> document = store.OpenDocument(name, kind);
  REQUIRE(document);
  return **document;
}

void Set(sync::Document& document, const std::string& key, double value) {
  REQUIRE(document.Set(document.root(), key, value));
}

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Writes `value` under `key` straight into the RocksDB database at `path`.
void RawPut(const std::string& path, const std::string& key, const std::string& value) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::Open(options, path, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  REQUIRE(db->Put(rocksdb::WriteOptions(), key, value).ok());
}

TEST_CASE("a store of another format version is refused before anything is touched",
          "[storage][refusal]") {
  TempDir dir;
  { OpenStore(dir.path()); }
  std::string version;
  format::PutFixed32(version, 2);
  RawPut(dir.path(), format::VersionKey(), version);
  const auto before = Files(dir.path());

  Result<Store> store = Store::Open(dir.path());
  REQUIRE_FALSE(store);
  CHECK(store.error().reason == Reason::kUnknownVersion);
  CHECK_THAT(store.error().message, Catch::Contains("version 2"));
  CHECK(Files(dir.path()) == before);
}

TEST_CASE("a directory holding something else is refused as unknown-version",
          "[storage][refusal]") {
  TempDir dir;
  SECTION("a RocksDB database without a version") { RawPut(dir.path(), "other", "data"); }
  SECTION("a directory of other files") {
    std::ofstream(dir.path() + "/notes.txt") << "not a store";
  }
  Result<Store> store = Store::Open(dir.path());
  REQUIRE_FALSE(store);
  CHECK(store.error().reason == Reason::kUnknownVersion);
  CHECK_THAT(store.error().ToString(), Catch::StartsWith("unknown-version: data directory"));
}

// A process killed while RocksDB created the store leaves its LOG (and
// perhaps LOCK, IDENTITY, a MANIFEST) and no CURRENT: nothing was stored,
// and the next open creates the store. Beside any other file it is refused.
TEST_CASE("a store whose creation was cut short opens as a new one", "[storage]") {
  TempDir dir;
  std::ofstream(dir.path() + "/LOG") << "rocksdb began";
  std::ofstream(dir.path() + "/IDENTITY") << "x";
  std::ofstream(dir.path() + "/MANIFEST-000001");
  {
    Store store = OpenStore(dir.path());
    OpenDoc(store, "notes");
  }
  CHECK(Store::Open(dir.path()));
  TempDir other;
  std::ofstream(other.path() + "/LOG") << "rocksdb began";
  std::ofstream(other.path() + "/notes.txt") << "not a store";
  Result<Store> refused = Store::Open(other.path());
  REQUIRE_FALSE(refused);
  CHECK(refused.error().reason == Reason::kUnknownVersion);
}

// Bytes the files under `path` take on disk (allocated blocks, as du counts).
uint64_t DiskBytes(const std::string& path) {
  uint64_t bytes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
    struct stat info {};
    if (::stat(entry.path().c_str(), &info) == 0)
      bytes += static_cast<uint64_t>(info.st_blocks) * 512;
  }
  return bytes;
}

TEST_CASE("an open store with one document is small on disk, 70 MB when preallocated",
          "[storage]") {
  for (const bool preallocate : {false, true}) {
    TempDir dir;
    Options options;
    options.preallocate = preallocate;
    Result<Store> store = Store::Open(dir.path(), options);
    REQUIRE(store);
    sync::Document& notes = OpenDoc(*store, "notes");
    REQUIRE(notes.Set(notes.root(), "k", 1.0));
    const uint64_t bytes = DiskBytes(dir.path());
    INFO("preallocate " << preallocate << ": " << bytes << " bytes on disk");
    if (preallocate) {
      CHECK(bytes > 60'000'000);  // RocksDB's WAL, 1.1 x the 64 MiB memtable.
    } else {
      CHECK(bytes < 1'000'000);
    }
  }
}

TEST_CASE("a large document is snapshotted no more often than its log grows by its size",
          "[storage]") {
  TempDir dir;
  Options options;
  options.snapshot_every_bytes = 1 << 20;
  {
    Store store = OpenStore(dir.path(), options);
    sync::Document& large = OpenDoc(store, "large");
    std::mt19937_64 random(11);
    for (int i = 0; i < 40; ++i) {  // 20 MiB that do not compress, 512 KiB a commit.
      codec::Bytes value{std::string(512 << 10, '\0')};
      for (char& byte : value.data) byte = static_cast<char>(random());
      REQUIRE(large.Set(large.root(), "k" + std::to_string(i), std::move(value)));
    }
    // Every 1 MiB of log up to 8 MiB of document (8 snapshots), then only
    // once the log since the last one is as large as it: at 16 MiB. Every
    // 1 MiB throughout would be 20.
    const uint64_t written = store.Stats().snapshots_written;
    INFO(written << " snapshots");
    CHECK(written >= 8);
    CHECK(written <= 10);
  }
  Store store = OpenStore(dir.path(), options);  // It reopens whole.
  CHECK(OpenDoc(store, "large").root().size() == 40);
}

TEST_CASE("a new name gets a fresh root, and reopening finds the same root", "[storage]") {
  TempDir dir;
  Id object_root, map_root;
  {
    Store store = OpenStore(dir.path());
    sync::Document& object = OpenDoc(store, "notes");
    sync::Document& map = OpenDoc(store, "people", Kind::kMap);
    CHECK(&OpenDoc(store, "notes") == &object);  // Open names share one document.
    CHECK(map.root().kind() == Kind::kMap);
    object_root = object.root().id();
    map_root = map.root().id();
    CHECK(store.Head("notes") == 0);
  }
  Store store = OpenStore(dir.path());
  CHECK(OpenDoc(store, "notes", Kind::kArray).root().id() == object_root);
  CHECK(OpenDoc(store, "notes").root().kind() == Kind::kObject);
  CHECK(OpenDoc(store, "people").root().id() == map_root);
}

TEST_CASE("document names are checked", "[storage][refusal]") {
  TempDir dir;
  Store store = OpenStore(dir.path());
  auto bad = GENERATE(std::string(), std::string(257, 'a'), std::string("a\x01"),
                      std::string("tab\there"), std::string("del\x7f"), std::string("\xc2\x80"),
                      std::string("\xff"), std::string("a\0b", 3));
  Result<sync::Document*> document = store.OpenDocument(bad);
  REQUIRE_FALSE(document);
  CHECK(document.error().reason == Reason::kInvalidName);
  CHECK(store.List().empty());

  for (std::string good : {std::string(256, 'a'), std::string("docs/a b"),
                           std::string("caf\xc3\xa9"), std::string("\xf0\x9f\x98\x80")}) {
    CHECK(store.OpenDocument(good));
  }
}

TEST_CASE("every commit is logged under the next seq and Since answers from it", "[storage]") {
  TempDir dir;
  Store store = OpenStore(dir.path());
  sync::Document& document = OpenDoc(store, "d");
  for (int i = 1; i <= 5; ++i) Set(document, "k" + std::to_string(i), i);
  CHECK(store.Head("d") == 5);

  Result<std::vector<Entry>> all = store.Since("d", 0);
  REQUIRE(all);
  REQUIRE(all->size() == 5);
  for (uint64_t i = 0; i < 5; ++i) {
    CHECK((*all)[i].seq == i + 1);
    CHECK((*all)[i].commit.deltas.at(0).ref.key == "k" + std::to_string(i + 1));
  }
  Result<std::vector<Entry>> tail = store.Since("d", 3);
  REQUIRE(tail);
  REQUIRE(tail->size() == 2);
  CHECK(tail->front().seq == 4);
  Result<std::vector<Entry>> limited = store.Since("d", 1, 2);
  REQUIRE(limited);
  CHECK(limited->size() == 2);
  CHECK(limited->back().seq == 3);

  Result<std::vector<Entry>> at_head = store.Since("d", 5);
  REQUIRE(at_head);
  CHECK(at_head->empty());
  Result<std::vector<Entry>> past_head = store.Since("d", 9);
  REQUIRE(past_head);
  CHECK(past_head->empty());

  Result<std::vector<Entry>> missing = store.Since("nothing", 0);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().reason == Reason::kNoDocument);
}

TEST_CASE("Since refuses truncated once the log no longer reaches back", "[storage][refusal]") {
  TempDir dir;
  Options options;
  options.snapshot_every_commits = 10;
  options.history_commits = 4;
  Store store = OpenStore(dir.path(), options);
  sync::Document& document = OpenDoc(store, "d");
  for (int i = 1; i <= 25; ++i) Set(document, "k", i);
  // Snapshots at 10 and 20; the log keeps 4 commits below the newest.
  auto info = store.Info("d");
  REQUIRE(info);
  CHECK(info->head == 25);
  CHECK(info->snapshot == 20);
  CHECK(info->floor == 16);

  Result<std::vector<Entry>> from_floor = store.Since("d", 16);
  REQUIRE(from_floor);
  CHECK(from_floor->size() == 9);
  CHECK(from_floor->front().seq == 17);
  for (uint64_t seq : {0, 1, 15}) {
    Result<std::vector<Entry>> below = store.Since("d", seq);
    REQUIRE_FALSE(below);
    CHECK(below.error().reason == Reason::kTruncated);
    CHECK_THAT(below.error().message, Catch::Contains("'d'"));
  }
  // Seqs continue after truncation, across a reopen.
  store = OpenStore(dir.Sub("other"));
  store = OpenStore(dir.path(), options);
  Set(OpenDoc(store, "d"), "k", 26);
  CHECK(store.Head("d") == 26);
  CHECK(store.Since("d", 25)->front().seq == 26);
}

TEST_CASE("StateAt rebuilds a past state while the history reaches it", "[storage]") {
  TempDir dir;
  Options options;
  options.snapshot_every_commits = 5;
  options.history_commits = 6;
  Store store = OpenStore(dir.path(), options);
  sync::Document& document = OpenDoc(store, "d");
  std::vector<sync::Snapshot> states{sync::TakeSnapshot(document)};
  sync::testing::Editor editor(7);
  while (store.Head("d") < 23) {
    editor.RandomEdit(document);
    if (states.size() <= store.Head("d")) states.push_back(sync::TakeSnapshot(document));
  }
  // Snapshots at 15 and 20 (5 and 10 fell below the floor, 14): states
  // 15..23 can be rebuilt from them and the log.
  REQUIRE(store.Info("d")->floor == 14);
  for (uint64_t seq = 15; seq <= 23; ++seq) {
    Result<sync::Snapshot> state = store.StateAt("d", seq);
    REQUIRE(state);
    CHECK(*state == states[seq]);
  }
  Result<sync::Snapshot> gone = store.StateAt("d", 3);
  REQUIRE_FALSE(gone);
  CHECK(gone.error().reason == Reason::kTruncated);
  CHECK(store.StateAt("d", 24).error().reason == Reason::kNoDocument);
}

TEST_CASE("documents are listed by name, renamed and removed", "[storage]") {
  TempDir dir;
  Store store = OpenStore(dir.path());
  for (const char* name : {"b/2", "a/1", "b/1", "c"}) Set(OpenDoc(store, name), "x", 1);
  Set(OpenDoc(store, "b/1"), "y", 2);

  auto names = [](const std::vector<DocumentInfo>& infos) {
    std::vector<std::string> out;
    for (const auto& info : infos) out.push_back(info.name);
    return out;
  };
  CHECK(names(store.List()) == std::vector<std::string>{"a/1", "b/1", "b/2", "c"});
  CHECK(names(store.List("b/")) == std::vector<std::string>{"b/1", "b/2"});
  CHECK(names(store.List("", "b/1", 2)) == std::vector<std::string>{"b/2", "c"});
  const DocumentInfo b1 = store.List("b/1").at(0);
  CHECK(b1.head == 2);
  CHECK(b1.loaded);
  CHECK(b1.observables == 1);

  sync::Document& renamed = OpenDoc(store, "b/1");
  REQUIRE(store.Rename("b/1", "z"));
  CHECK(&OpenDoc(store, "z") == &renamed);
  Set(renamed, "z", 3);
  CHECK(store.Head("z") == 3);
  CHECK_FALSE(store.Info("b/1"));
  CHECK(store.Rename("z", "c").error().reason == Reason::kInvalidName);
  CHECK(store.Rename("nothing", "q").error().reason == Reason::kNoDocument);
  CHECK(store.Rename("z", "").error().reason == Reason::kInvalidName);

  REQUIRE(store.Remove("c"));
  CHECK(store.Remove("c").error().reason == Reason::kNoDocument);
  CHECK(names(store.List()) == std::vector<std::string>{"a/1", "b/2", "z"});
  store = OpenStore(dir.Sub("other"));
  store = OpenStore(dir.path());
  CHECK(names(store.List()) == std::vector<std::string>{"a/1", "b/2", "z"});
  CHECK(store.Head("z") == 3);
  CHECK(OpenDoc(store, "z").root().Get("z"));
  CHECK(OpenDoc(store, "c").root().size() == 0);  // A new document now.
}

// A link does not exist yet: a second replica's commits are delivered with
// Document::Apply, as a link delivers them. Switch to a real link later.
TEST_CASE("commits arriving over a link are persisted exactly once (link stand-in)",
          "[storage][link-stand-in]") {
  TempDir dir;
  std::unique_ptr<sync::Document> remote;
  sync::Snapshot expected;
  std::vector<std::string> sent;
  {
    Store store = OpenStore(dir.path());
    sync::Document& stored = OpenDoc(store, "shared");
    remote = std::make_unique<sync::Document>(stored.root().id(), Kind::kObject);
    std::vector<Commit> outbox, inbox;  // remote -> stored, stored -> remote.
    remote->Watch([&](const sync::Change& change) {
      if (change.local) outbox.push_back(change.commit);
    });
    stored.Watch([&](const sync::Change& change) {
      if (change.local) inbox.push_back(change.commit);
    });
    sync::testing::Editor editor(11);
    for (int i = 0; i < 200; ++i) {
      editor.RandomEdit(*remote);
      for (const Commit& commit : outbox) {
        REQUIRE(stored.Apply(commit));
        sent.push_back(*codec::EncodeCommit(commit));
      }
      outbox.clear();
      if (i % 3 == 0) Set(stored, "local", i);  // Interleaved local commits.
      for (const Commit& commit : inbox) REQUIRE(remote->Apply(commit));
      inbox.clear();
    }
    CHECK(sync::TakeSnapshot(stored) == sync::TakeSnapshot(*remote));
    expected = sync::TakeSnapshot(stored);
  }
  Store store = OpenStore(dir.path());
  CHECK(sync::TakeSnapshot(OpenDoc(store, "shared")) == expected);
  Result<std::vector<Entry>> log = store.Since("shared", 0);
  REQUIRE(log);
  std::vector<std::string> arrived;
  for (const Entry& entry : *log) {
    std::string bytes = *codec::EncodeCommit(entry.commit);
    if (entry.commit.deltas.at(0).ref.key != "local") arrived.push_back(bytes);
  }
  CHECK(arrived == sent);  // Each once, in order.
}

TEST_CASE("a store and a link on one document: what arrives is stored once", "[storage][link]") {
  TempDir dir;
  std::vector<std::string> sent;
  sync::Snapshot expected;
  {
    Store store = OpenStore(dir.path());
    sync::Document& stored = OpenDoc(store, "shared");
    sync::ManualScheduler scheduler;
    auto [near, far] = sync::InProcessPair(scheduler);
    sync::Link server(*near, scheduler), client(*far, scheduler);
    REQUIRE(server.Share("shared", &stored));
    auto remote = client.Share("shared");  // Empty: gets the state first.
    REQUIRE(remote);
    scheduler.RunUntilIdle();
    REQUIRE((*remote)->ready());
    sync::Document& copy = *(*remote)->document();
    copy.Watch([&](const sync::Change& change) {
      if (change.local) sent.push_back(*codec::EncodeCommit(change.commit));
    });
    sync::testing::Editor editor(12);
    for (int i = 0; i < 200; ++i) {
      editor.RandomEdit(copy);
      if (i % 3 == 0) Set(stored, "local", i);
      scheduler.RunUntilIdle();
    }
    CHECK(sync::TakeSnapshot(stored) == sync::TakeSnapshot(copy));
    expected = sync::TakeSnapshot(stored);
  }
  Store store = OpenStore(dir.path());
  CHECK(sync::TakeSnapshot(OpenDoc(store, "shared")) == expected);
  Result<std::vector<Entry>> log = store.Since("shared", 0);
  REQUIRE(log);
  std::vector<std::string> arrived;
  for (const Entry& entry : *log) {
    if (entry.commit.deltas.at(0).ref.key != "local") {
      arrived.push_back(*codec::EncodeCommit(entry.commit));
    }
  }
  CHECK(sent.size() > 100);
  CHECK(arrived == sent);  // Each once, in order.
}

TEST_CASE("group commit writes every pending document in one Sync", "[storage]") {
  TempDir dir;
  for (Durability durability : {Durability::kSync, Durability::kWal, Durability::kNone}) {
    Options options;
    options.durability = durability;
    options.sync_every_commit = false;
    const std::string path = dir.Sub(std::to_string(static_cast<int>(durability)));
    {
      Store store = OpenStore(path, options);
      for (int round = 0; round < 3; ++round) {
        for (int d = 0; d < 10; ++d) {
          sync::Document& document = OpenDoc(store, "doc" + std::to_string(d));
          Set(document, "a", round);
          Set(document, "b", round);
        }
        CHECK(store.Head("doc3") == 2 * static_cast<uint64_t>(round) + 2);  // Pending counts.
        store.Sync();
      }
    }
    Store store = OpenStore(path, options);
    for (int d = 0; d < 10; ++d) {
      CHECK(store.Head("doc" + std::to_string(d)) == 6);
      CHECK(*OpenDoc(store, "doc" + std::to_string(d)).root().Get("b") == codec::Value(2.0));
    }
  }
}

TEST_CASE("batches written on another thread keep their order and what came after", "[storage]") {
  TempDir dir;
  Options options;
  options.sync_every_commit = false;
  options.snapshot_every_commits = 50;  // Snapshots fall due under way.
  options.history_commits = 20;
  {
    Store store = OpenStore(dir.path(), options);
    sync::Document& a = OpenDoc(store, "a");
    sync::Document& b = OpenDoc(store, "b");
    std::vector<Store::Batch> staged;
    for (int round = 0; round < 40; ++round) {
      for (int i = 0; i < 5; ++i) Set(round % 3 ? a : b, "k" + std::to_string(i), round);
      CHECK(store.pending());
      staged.push_back(store.Stage());
      CHECK_FALSE(store.pending());
      CHECK(staged.back().commits() == 5);
      // Written on other threads, the newest first: each waits its turn.
      if (staged.size() == 4) {
        std::vector<std::future<std::optional<std::string>>> turn;
        for (auto it = staged.rbegin(); it != staged.rend(); ++it) {
          turn.push_back(std::async(std::launch::async, [&batch = *it] { return batch.Write(); }));
        }
        for (auto& write : turn) CHECK_FALSE(write.get());
        for (auto& batch : staged) store.Finish(std::move(batch));
        staged.clear();
      }
    }
    // One staged and written late elsewhere: Sync() waits for it, then
    // writes what is pending after it.
    Set(a, "last", 1);
    Store::Batch held = store.Stage();
    Set(b, "last", 2);
    auto late = std::async(std::launch::async, [&held] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      return held.Write();
    });
    const auto start = std::chrono::steady_clock::now();
    store.Sync();
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(40));
    CHECK_FALSE(late.get());
    store.Finish(std::move(held));
    CHECK(store.Stats().snapshots_written >= 2);
    CHECK(store.Head("a") + store.Head("b") == 40 * 5 + 2);
  }
  Store store = OpenStore(dir.path(), options);
  CHECK(*OpenDoc(store, "a").root().Get("last") == codec::Value(1.0));
  CHECK(*OpenDoc(store, "b").root().Get("last") == codec::Value(2.0));
  CHECK(*OpenDoc(store, "a").root().Get("k4") == codec::Value(38.0));
  CHECK(*OpenDoc(store, "b").root().Get("k4") == codec::Value(39.0));
  auto info = store.Info("a");
  REQUIRE(info);
  CHECK(info->snapshot > 0);
  CHECK(info->floor > 0);  // History below the window went with a snapshot.
  CHECK(store.Since("a", info->floor));
}

TEST_CASE("a snapshot a batch makes due is built on the thread that wrote it", "[storage]") {
  TempDir dir;
  Options options;
  options.sync_every_commit = false;
  options.snapshot_every_commits = 30;
  options.history_commits = 10;
  Store store = OpenStore(dir.path(), options);
  sync::Document& a = OpenDoc(store, "a");
  sync::Document& b = OpenDoc(store, "b");
  sync::Document& c = OpenDoc(store, "c");
  sync::Document& gone = OpenDoc(store, "gone");
  for (int i = 1; i <= 30; ++i) {
    Set(a, "k", i);
    Set(b, "k" + std::to_string(i % 7), i);
    Set(gone, "k", i);
  }
  Store::Batch batch = store.Stage();
  // Written and prepared elsewhere, as the node's storage thread does; the
  // store's thread goes on committing meanwhile.
  // (Catch's checks are for this thread only: the writer's result is
  // checked once it is joined.)
  std::optional<std::string> failed;
  std::thread writer([&batch, &failed] {
    failed = batch.Write();
    batch.PrepareSnapshots();
  });
  Set(c, "k", 1);
  writer.join();
  CHECK_FALSE(failed);
  // A document removed before Finish() gets no snapshot filed.
  REQUIRE(store.Remove("gone"));
  store.Finish(std::move(batch));
  CHECK(store.Stats().snapshots_prepared == 2);
  CHECK(store.Stats().snapshots_written == 2);
  store.Sync();
  for (const char* name : {"a", "b"}) {
    auto info = store.Info(name);
    REQUIRE(info);
    CHECK(info->snapshot == 30);
    CHECK(info->floor == 20);
  }
  // A batch nobody prepared: Finish() builds its snapshot itself.
  for (int i = 31; i <= 60; ++i) Set(a, "k", i);
  store.Finish(store.Stage());
  CHECK(store.Stats().snapshots_written == 3);
  CHECK(store.Stats().snapshots_prepared == 2);
  store.Sync();
  CHECK(store.Info("a")->snapshot == 60);
  // What they hold is the state at their seq, as a reopen reads it.
  store.CloseDocument("a");
  CHECK(*OpenDoc(store, "a").root().Get("k") == codec::Value(60.0));
  Result<sync::Snapshot> at30 = store.StateAt("b", 30);
  REQUIRE(at30);
  CHECK(at30->observables.at(at30->root).slots.size() == 7);
}

TEST_CASE("closing a document syncs it and a reopen gets it back", "[storage]") {
  TempDir dir;
  Options options;
  options.sync_every_commit = false;
  Store store = OpenStore(dir.path(), options);
  Set(OpenDoc(store, "d"), "a", 1);
  store.CloseDocument("d");
  CHECK_FALSE(store.Info("d")->loaded);
  CHECK(store.Head("d") == 1);
  CHECK(*OpenDoc(store, "d").root().Get("a") == codec::Value(1.0));
  store.CloseDocument("never opened");  // Nothing.
}

// Fills a small tmpfs in a child process that reports each seq once Set()
// has returned (stored). The child must stop by Failure (exit 3), and
// nothing it reported may be missing. RocksDB's info LOG goes elsewhere:
// on the full disk, Debian's RocksDB (assertions on) aborts in its logger.
TEST_CASE("Info estimates the bytes a document takes on disk", "[storage]") {
  TempDir dir;
  Options options;
  options.sync_every_commit = false;
  Store store = OpenStore(dir.path(), options);
  sync::Document& document = OpenDoc(store, "d");
  for (int i = 0; i < 3000; ++i) {
    REQUIRE(document.Set(document.root(), "k" + std::to_string(i % 50),
                         std::string(100, 'a' + i % 26)));
  }
  store.Sync();
  store.Compact();  // Estimates come from table files: small memtables may read 0.
  auto info = store.Info("d");
  REQUIRE(info);
  CHECK(info->approximate_bytes > 10000);  // Compressed: the values repeat.
  CHECK(info->approximate_bytes < 1000000);
}

TEST_CASE("a store closed by assigning over it stores what was pending", "[storage]") {
  TempDir dir;
  Options options;
  options.sync_every_commit = false;
  Store store = OpenStore(dir.path(), options);
  Set(OpenDoc(store, "d"), "a", 1);
  store = OpenStore(dir.Sub("other"), options);
  store = OpenStore(dir.path(), options);
  CHECK(store.Head("d") == 1);
}

TEST_CASE("a full disk stops the store and nothing unstored is reported", "[storage][disk]") {
  TempDir dir;
  Tmpfs disk(dir.Sub("tmpfs"), "8m");
  if (!disk.mounted) return;
  const std::string& mount_point = disk.path;
  // Room to free later, so that the store can be reopened on this disk.
  std::ofstream(mount_point + "/filler") << std::string(1 << 20, 'f');
  const std::string path = mount_point + "/store";

  int out[2];
  REQUIRE(pipe(out) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(out[0]);
    auto say = [&](const std::string& line) {
      if (write(out[1], line.data(), line.size()) < 0) _exit(4);
    };
    try {
      Options options;
      options.rocksdb_log_dir = dir.Sub("log");
      Result<Store> store = Store::Open(path, options);
      if (!store) _exit(5);
      Result<sync::Document*> document = store->OpenDocument("d");
      if (!document) _exit(5);
      const std::string big(16 << 10, 'x');
      for (int i = 0; i < 100000; ++i) {
        if (!(*document)->Set((*document)->root(), "k" + std::to_string(i), big)) _exit(6);
        say("durable " + std::to_string(store->Head("d")) + "\n");
      }
    } catch (const Failure& failure) {
      say(std::string("failure ") + failure.what() + "\n");
      _exit(3);
    }
    _exit(0);
  }
  close(out[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(out[0], buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  close(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  INFO(text.substr(text.size() > 300 ? text.size() - 300 : 0));
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 3);
  CHECK_THAT(text, Catch::Contains("failure storage failed: IO error: No space left"));
  uint64_t durable = 0;
  std::istringstream lines(text);
  for (std::string word; lines >> word;) {
    if (word == "durable") lines >> durable;
  }
  CHECK(durable > 0);

  std::filesystem::remove(mount_point + "/filler");
  Store store = OpenStore(path);
  sync::Document& document = OpenDoc(store, "d");
  CHECK(store.Head("d") >= durable);
  CHECK(store.Head("d") <= durable + 1);  // At most the one that failed.
  for (uint64_t i = 0; i < durable; ++i) CHECK(document.root().Get("k" + std::to_string(i)));
  CHECK(sync::FromSnapshot(sync::TakeSnapshot(document)));
}

TEST_CASE("a retrying store waits out a full disk and loses nothing", "[storage][disk]") {
  TempDir dir;
  // RocksDB resumes only with room for its memtables (64 MiB) again: the
  // filler leaves 8 MiB to fill, and frees 92.
  Tmpfs disk(dir.Sub("tmpfs"), "100m");
  if (!disk.mounted) return;
  std::ofstream(disk.path + "/filler") << std::string(92 << 20, 'f');
  Options options;
  options.retry_failed_writes = true;
  options.retry_interval = std::chrono::milliseconds(50);
  std::mutex log_mutex;
  std::vector<std::string> log;
  options.rocksdb_log = [&](const std::string& line) {
    std::lock_guard lock(log_mutex);
    log.push_back(line);
  };
  const std::string path = disk.path + "/store";
  uint64_t stored = 0;
  std::string stall;
  {
    Store store = OpenStore(path, options);
    sync::Document& document = OpenDoc(store, "d");
    // Frees the filler once a write has waited a while.
    std::atomic<bool> freed = false;
    std::thread janitor([&] {
      while (!store.Stalled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      stall = *store.Stalled();
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      CHECK(store.Stalled());  // Still waiting: nothing gave up.
      std::filesystem::remove(disk.path + "/filler");
      freed = true;
    });
    const std::string big(16 << 10, 'x');
    // Each Set() returns once its commit is stored (sync_every_commit).
    while (!freed) {
      REQUIRE(document.Set(document.root(), "k" + std::to_string(stored), big));
      ++stored;
      REQUIRE(stored < 100000);
    }
    janitor.join();
    CHECK_FALSE(store.Stalled());
    for (int i = 0; i < 20; ++i, ++stored) {
      REQUIRE(document.Set(document.root(), "k" + std::to_string(stored), std::string("small")));
    }
  }
  CHECK_THAT(stall, Catch::Contains("No space left on device"));
  INFO("stored " << stored << "; RocksDB said " << log.size() << " lines");
  Store store = OpenStore(path);
  sync::Document& document = OpenDoc(store, "d");
  CHECK(store.Head("d") == stored);
  for (uint64_t i = 0; i < stored; ++i) REQUIRE(document.root().Get("k" + std::to_string(i)));
  CHECK(sync::FromSnapshot(sync::TakeSnapshot(document)));
}

TEST_CASE("a retrying store gives up when told to, latching", "[storage][disk]") {
  TempDir dir;
  Tmpfs disk(dir.Sub("tmpfs"), "4m");
  if (!disk.mounted) return;
  Options options;
  options.retry_failed_writes = true;
  options.retry_interval = std::chrono::milliseconds(20);
  options.rocksdb_log = [](const std::string&) {};
  Store store = OpenStore(disk.path + "/store", options);
  sync::Document& document = OpenDoc(store, "d");
  std::thread stopper([&] {
    while (!store.Stalled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    store.StopRetrying();
  });
  const std::string big(16 << 10, 'x');
  bool threw = false;
  try {
    for (int i = 0; i < 100000; ++i)
      (void)document.Set(document.root(), "k" + std::to_string(i), big);
  } catch (const Failure& failure) {
    threw = true;
    CHECK_THAT(failure.what(), Catch::Contains("No space left"));
  }
  stopper.join();
  CHECK(threw);
  CHECK_THROWS_AS(store.Sync(), Failure);  // Latched.
}

TEST_CASE("a new document can take a root id made elsewhere", "[storage]") {
  TempDir dir;
  const Id root = sync::MintId();
  {
    Store store = OpenStore(dir.path());
    Result<sync::Document*> made = store.OpenDocument("replica", Kind::kMap, root);
    REQUIRE(made);
    CHECK((*made)->root().id() == root);
    CHECK((*made)->root().kind() == Kind::kMap);
  }
  Store store = OpenStore(dir.path());
  Result<sync::Document*> again = store.OpenDocument("replica", Kind::kObject, sync::MintId());
  REQUIRE(again);
  CHECK((*again)->root().id() == root);  // Stored: the arguments for a new one are unused.
  CHECK((*again)->root().kind() == Kind::kMap);
}

}  // namespace
}  // namespace aweft::storage
