#include <rocksdb/db.h>

#include <catch2/catch.hpp>

#include "codec/commit.h"
#include "storage/format.h"
#include "storage/store.h"
#include "sync/snapshot.h"
#include "tests/storage/temp_dir.h"

namespace aweft::storage {
namespace {

using codec::Reason;
using testing::TempDir;

// Damages the closed store at `path` through RocksDB directly: `damage`
// gets the database and the number of document `name`.
template <typename Damage>
void DamageStore(const std::string& path, const std::string& name, Damage damage) {
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::Open(rocksdb::Options(), path, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::string meta_value;
  REQUIRE(db->Get(rocksdb::ReadOptions(), format::MetaKey(name), &meta_value).ok());
  std::optional<format::Meta> meta = format::DecodeMeta(meta_value);
  REQUIRE(meta);
  damage(*db, meta->number);
}

// Two documents, "good" and "bad", 30 commits each, with a snapshot at 20.
void Fill(const std::string& path) {
  Options options;
  options.snapshot_every_commits = 20;
  Store store = std::move(*Store::Open(path, options));
  for (const char* name : {"good", "bad"}) {
    sync::Document& document = **store.OpenDocument(name);
    for (int i = 1; i <= 30; ++i) {
      REQUIRE(document.Set(document.root(), "k" + std::to_string(i % 4), double(i)));
    }
  }
}

TEST_CASE("a damaged document refuses to open, naming itself and the seq, while others work",
          "[storage][refusal][corrupt]") {
  TempDir dir;
  Fill(dir.path());
  std::string expected;
  SECTION("a log entry that does not decode") {
    DamageStore(dir.path(), "bad", [](rocksdb::DB& db, uint64_t number) {
      REQUIRE(db.Put({}, format::LogKey(number, 25), "\xff\x00garbage").ok());
    });
    expected = "the log entry at seq 25 does not decode";
  }
  SECTION("a log entry that decodes but does not apply") {
    DamageStore(dir.path(), "bad", [](rocksdb::DB& db, uint64_t number) {
      std::string value;
      REQUIRE(db.Get({}, format::LogKey(number, 22), &value).ok());
      Commit commit = *codec::DecodeCommit(value);
      commit.deltas.at(0).type = codec::DeltaType::kAdd;  // Its slot exists.
      REQUIRE(db.Put({}, format::LogKey(number, 22), *codec::EncodeCommit(commit)).ok());
    });
    expected = "the log entry at seq 22 does not apply: slot-exists";
  }
  SECTION("a log entry missing") {
    DamageStore(dir.path(), "bad", [](rocksdb::DB& db, uint64_t number) {
      REQUIRE(db.Delete({}, format::LogKey(number, 27)).ok());
    });
    expected = "the log entry at seq 27 is missing";
  }
  SECTION("the log cut short of the head") {
    DamageStore(dir.path(), "bad", [](rocksdb::DB& db, uint64_t number) {
      REQUIRE(db.Delete({}, format::LogKey(number, 30)).ok());
    });
    expected = "the log ends at seq 29, before its head at seq 30";
  }
  SECTION("a snapshot whose bytes changed") {
    DamageStore(dir.path(), "bad", [](rocksdb::DB& db, uint64_t number) {
      std::string value;
      REQUIRE(db.Get({}, format::SnapshotKey(number, 20), &value).ok());
      value[value.size() - 6] ^= 0x55;  // Inside the zstd frame.
      REQUIRE(db.Put({}, format::SnapshotKey(number, 20), value).ok());
    });
    expected = "the snapshot at seq 20 is unreadable: it does not decompress";
  }
  SECTION("a snapshot cut short") {
    DamageStore(dir.path(), "bad", [](rocksdb::DB& db, uint64_t number) {
      REQUIRE(db.Put({}, format::SnapshotKey(number, 20), "\x00\x01").ok());
    });
    expected = "the snapshot at seq 20 is unreadable: it is cut short";
  }
  SECTION("a snapshot of another document") {
    DamageStore(dir.path(), "bad", [](rocksdb::DB& db, uint64_t number) {
      std::string value;
      REQUIRE(db.Get({}, format::SnapshotKey(number - 1, 20), &value).ok());
      REQUIRE(db.Put({}, format::SnapshotKey(number, 20), value).ok());
    });
    expected = "the snapshot at seq 20 is unreadable: its header names another root";
  }
  SECTION("a damaged head record") {
    DamageStore(dir.path(), "bad", [](rocksdb::DB& db, uint64_t number) {
      REQUIRE(db.Put({}, format::HeadKey(number), "short").ok());
    });
    expected = "its head record is missing or damaged";
  }

  Store store = std::move(*Store::Open(dir.path()));
  Result<sync::Document*> bad = store.OpenDocument("bad");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().reason == Reason::kCorrupt);
  CHECK_THAT(bad.error().message, Catch::StartsWith("document 'bad': " + expected));
  CHECK_THAT(bad.error().ToString(), Catch::StartsWith("corrupt: document 'bad'"));

  Result<sync::Document*> good = store.OpenDocument("good");
  REQUIRE(good);
  REQUIRE((*good)->Set((*good)->root(), "after", true));
  CHECK(store.Head("good") == 31);
  CHECK(store.Since("good", 20));
  const std::vector<DocumentInfo> listed = store.List();
  REQUIRE(listed.size() == 2);
  CHECK(listed[1].name == "good");
  CHECK(listed[1].damage.empty());
  REQUIRE(store.Remove("bad"));      // A damaged document can still be removed.
  CHECK(store.OpenDocument("bad"));  // And the name taken anew.
}

}  // namespace
}  // namespace aweft::storage
