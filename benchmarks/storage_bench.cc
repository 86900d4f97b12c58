// The store's figures, printed as a table: durable commits per second (one
// writer syncing each commit; 100 documents with group commit) in each
// durability mode; open time of a document with 1,000,000 commits of
// history, with and without a snapshot; bytes on disk per commit; snapshot
// compression ratio.
//
// Run: build/benchmarks/storage_bench [directory [large]] (default /tmp;
// `large`: only the 300 x 1 MiB document). It writes a few GB there and
// removes them.

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "codec/commit.h"
#include "storage/store.h"
#include "sync/snapshot.h"

namespace {

using namespace aweft;
using Clock = std::chrono::steady_clock;

std::string base_dir = "/tmp";

class TempDir {
 public:
  TempDir() {
    std::string pattern = base_dir + "/aweft-bench-XXXXXX";
    if (!mkdtemp(pattern.data())) std::abort();
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

uint64_t DirBytes(const std::string& path) {
  uint64_t total = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
    if (entry.is_regular_file()) total += entry.file_size();
  }
  return total;
}

storage::Store Open(const std::string& path, const storage::Options& options) {
  auto store = storage::Store::Open(path, options);
  if (!store) {
    std::fprintf(stderr, "%s\n", store.error().ToString().c_str());
    std::exit(1);
  }
  return std::move(*store);
}

sync::Document& Doc(storage::Store& store, const std::string& name) {
  auto document = store.OpenDocument(name);
  if (!document) {
    std::fprintf(stderr, "%s\n", document.error().ToString().c_str());
    std::exit(1);
  }
  return **document;
}

// Commit i of a typical stream: a number into one of 1000 keys of the root,
// and every 10th commit an entry pushed onto a list kept at 500 entries.
void Edit(sync::Document& document, uint64_t i) {
  sync::Observable& root = document.root();
  if (i % 10 == 0) {
    const codec::Value* list = root.Get("list");
    if (!list) {
      sync::Observable& array = document.Create(codec::Kind::kArray);
      (void)document.Set(root, "list", sync::Attach(array));
      return;
    }
    sync::Observable& array = *document.Find(std::get<codec::Reference>(*list).id);
    (void)document.Push(array, "entry " + std::to_string(i));
    if (array.size() > 500) (void)document.RemoveAt(array, 0);
    return;
  }
  (void)document.Set(root, "k" + std::to_string(i % 1000), static_cast<double>(i));
}

const char* ModeName(storage::Durability mode) {
  switch (mode) {
    case storage::Durability::kSync:
      return "sync";
    case storage::Durability::kWal:
      return "wal";
    case storage::Durability::kNone:
      return "none";
  }
  return "?";
}

void WriterThroughput(storage::Durability mode, bool preallocate = true) {
  TempDir dir;
  storage::Options options;
  options.durability = mode;
  options.preallocate = preallocate;
  const uint64_t n = mode == storage::Durability::kSync ? 3000 : 50000;
  storage::Store store = Open(dir.path(), options);
  sync::Document& document = Doc(store, "one");
  const auto start = Clock::now();
  for (uint64_t i = 1; i <= n; ++i) Edit(document, i);
  const double seconds = Seconds(start);
  std::printf(
      "%-44s %-5s %12.0f commits/s  (%.1f us each)\n",
      preallocate ? "1 writer, Sync per commit" : "1 writer, Sync per commit, no preallocation",
      ModeName(mode), n / seconds, seconds / n * 1e6);
}

void GroupThroughput(storage::Durability mode) {
  TempDir dir;
  storage::Options options;
  options.durability = mode;
  options.sync_every_commit = false;
  const uint64_t rounds = mode == storage::Durability::kSync ? 100 : 500;
  storage::Store store = Open(dir.path(), options);
  std::vector<sync::Document*> documents;
  for (int d = 0; d < 100; ++d) documents.push_back(&Doc(store, "doc" + std::to_string(d)));
  const auto start = Clock::now();
  for (uint64_t round = 1; round <= rounds; ++round) {
    for (sync::Document* document : documents) Edit(*document, round);
    store.Sync();  // One turn of the loop: one sync for 100 commits.
  }
  const double seconds = Seconds(start);
  std::printf("%-44s %-5s %12.0f commits/s  (%.0f syncs/s)\n",
              "100 documents, group commit (100 per Sync)", ModeName(mode), rounds * 100 / seconds,
              rounds / seconds);
}

// Builds `name` with `n` commits quickly (no WAL, big batches).
void Build(const std::string& path, storage::Options options, uint64_t n) {
  options.durability = storage::Durability::kNone;
  options.sync_every_commit = false;
  storage::Store store = Open(path, options);
  sync::Document& document = Doc(store, "history");
  for (uint64_t i = 1; i <= n; ++i) {
    Edit(document, i);
    if (i % 10000 == 0) store.Sync();
  }
  store.Sync();
}

// Opens the store, then times OpenDocument: the best and the first of 5.
void TimeOpen(const char* label, const std::string& path, const storage::Options& options) {
  std::vector<double> ms;
  size_t observables = 0;
  for (int i = 0; i < 5; ++i) {
    storage::Store store = Open(path, options);
    const auto start = Clock::now();
    sync::Document& document = Doc(store, "history");
    ms.push_back(Seconds(start) * 1e3);
    observables = document.observable_count();
  }
  std::printf("%-44s %10.1f ms first, %.1f ms best  (%zu observables)\n", label, ms[0],
              *std::min_element(ms.begin(), ms.end()), observables);
}

void History() {
  constexpr uint64_t kCommits = 1000000;
  storage::Options plain;  // Defaults: snapshots every 10000 commits.
  storage::Options no_snapshots;
  no_snapshots.snapshot_every_commits = 0;
  no_snapshots.snapshot_every_bytes = 0;

  TempDir log_only;
  auto start = Clock::now();
  Build(log_only.path(), no_snapshots, kCommits);
  std::printf("%-44s %10.1f s\n", "build 1,000,000 commits, log only", Seconds(start));
  TempDir snapshotted;
  start = Clock::now();
  Build(snapshotted.path(), plain, kCommits);
  std::printf("%-44s %10.1f s\n", "build 1,000,000 commits, snapshots", Seconds(start));

  TimeOpen("open 1M commits, no snapshot (replay all)", log_only.path(), no_snapshots);
  TimeOpen("open 1M commits, snapshot at head", snapshotted.path(), plain);
  {
    storage::Options options = plain;
    options.sync_every_commit = false;
    storage::Store store = Open(snapshotted.path(), options);
    sync::Document& document = Doc(store, "history");
    for (uint64_t i = 1; i < 10000; ++i) Edit(document, kCommits + i);
  }
  TimeOpen("open 1M commits, snapshot + 9,999 after it", snapshotted.path(), plain);

  // Bytes on disk, after compaction, of the log-only store.
  {
    storage::Store store = Open(log_only.path(), no_snapshots);
    store.Compact();
    auto info = store.Info("history");
    auto sample = store.Since("history", kCommits - 1000);
    uint64_t encoded = 0;
    for (const auto& entry : *sample) encoded += codec::EncodeCommit(entry.commit)->size();
    std::printf("%-44s %10.1f bytes (commit itself: %.1f bytes; log ~%.1f MB)\n",
                "bytes on disk per commit (compacted)",
                static_cast<double>(DirBytes(log_only.path())) / kCommits,
                static_cast<double>(encoded) / sample->size(), info->approximate_bytes / 1e6);
  }
}

void Ratio(const char* label, const std::function<void(sync::Document&)>& fill) {
  TempDir dir;
  storage::Store store = Open(dir.path(), {});
  sync::Document& document = Doc(store, "d");
  fill(document);
  if (!store.Snapshot("d")) std::abort();
  const size_t raw = codec::EncodeCommit(*sync::AsCommit(document))->size();
  const uint64_t stored = store.Info("d")->snapshot_bytes;
  const auto start = Clock::now();
  if (!store.StateAt("d", store.Head("d"))) std::abort();
  std::printf("%-44s %10.2f x  (%zu -> %llu bytes; load %.1f ms)\n", label,
              static_cast<double>(raw) / stored, raw, static_cast<unsigned long long>(stored),
              Seconds(start) * 1e3);
}

void Ratios() {
  Ratio("snapshot ratio: the history document", [](sync::Document& d) {
    for (uint64_t i = 1; i <= 20000; ++i) Edit(d, i);
  });
  Ratio("snapshot ratio: 2000 rows of text records", [](sync::Document& d) {
    (void)d.Atomic([&]() -> codec::Result<void> {
      sync::Observable& rows = d.Create(codec::Kind::kArray);
      (void)d.Set(d.root(), "rows", sync::Attach(rows));
      for (int i = 0; i < 2000; ++i) {
        sync::Observable& row = d.Create(codec::Kind::kObject);
        (void)d.Push(rows, sync::Attach(row));
        (void)d.Set(row, "name", "customer " + std::to_string(i * 7919 % 10007));
        (void)d.Set(row, "email", "user" + std::to_string(i) + "@example.com");
        (void)d.Set(row, "status", i % 3 ? "active" : "suspended");
        (void)d.Set(row, "balance", (i * 37 % 1000) / 4.0);
      }
      return {};
    });
  });
}

// A document written as 300 commits of 1 MiB each, random bytes so that
// nothing compresses, with the default options (a sync per commit): disk
// use against the live data, snapshots written, and the time to reopen it.
void LargeDocument() {
  constexpr int kCommits = 300;
  constexpr size_t kValue = 1 << 20;
  TempDir dir;
  std::mt19937_64 random(7);
  uint64_t snapshots = 0, live = 0;
  double write_seconds = 0;
  {
    storage::Store store = Open(dir.path(), {});
    sync::Document& document = Doc(store, "large");
    const auto start = Clock::now();
    for (int i = 0; i < kCommits; ++i) {
      codec::Bytes value{std::string(kValue, '\0')};
      for (size_t at = 0; at < kValue; at += 8) {
        const uint64_t word = random();
        std::memcpy(value.data.data() + at, &word, 8);
      }
      live += kValue;
      (void)document.Set(document.root(), "k" + std::to_string(i), std::move(value));
    }
    store.Sync();
    write_seconds = Seconds(start);
    snapshots = store.Stats().snapshots_written;
  }
  const uint64_t disk = DirBytes(dir.path());
  const auto start = Clock::now();
  storage::Store store = Open(dir.path(), {});
  const double store_open = Seconds(start);
  Doc(store, "large");
  const double reopen = Seconds(start);
  std::printf(
      "%-44s %10.2f x  (%.0f MB on disk for %.0f MB live; %llu snapshots; written in "
      "%.1f s; reopened in %.2f s, %.2f s of it the store)\n",
      "300 commits of 1 MiB: disk / live data", static_cast<double>(disk) / live, disk / 1e6,
      live / 1e6, static_cast<unsigned long long>(snapshots), write_seconds, reopen, store_open);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) base_dir = argv[1];
  LargeDocument();
  if (argc > 2 && std::string(argv[2]) == "large") return 0;
  using storage::Durability;
  for (Durability mode : {Durability::kSync, Durability::kWal, Durability::kNone}) {
    WriterThroughput(mode);
  }
  // Preallocating the WAL (storage::Options::preallocate, on by default):
  // what it costs a synced commit, interleaved to share the noise.
  for (int round = 0; round < 3; ++round) {
    WriterThroughput(Durability::kSync, true);
    WriterThroughput(Durability::kSync, false);
  }
  for (Durability mode : {Durability::kSync, Durability::kWal, Durability::kNone}) {
    GroupThroughput(mode);
  }
  History();
  Ratios();
}
