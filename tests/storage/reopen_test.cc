#include <catch2/catch.hpp>

#include "storage/store.h"
#include "sync/snapshot.h"
#include "tests/storage/temp_dir.h"
#include "tests/sync/editor.h"

namespace aweft::storage {
namespace {

using testing::TempDir;

struct Setup {
  const char* name;
  Options options;
};

Options Make(uint64_t every_commits, uint64_t every_bytes, uint64_t history, bool each = true) {
  Options options;
  options.snapshot_every_commits = every_commits;
  options.snapshot_every_bytes = every_bytes;
  options.history_commits = history;
  options.sync_every_commit = each;
  return options;
}

// Random edit streams (seeded); after every stretch the store is closed and
// reopened, and the document must come back equal, ids and positions
// included, and go on taking edits.
TEST_CASE("a reopened document equals the one before close", "[storage][reopen]") {
  const Setup setup = GENERATE(Setup{"log only, no snapshots", Make(0, 0, 0)},
                               Setup{"snapshots, whole log kept", Make(37, 0, 1000000)},
                               Setup{"snapshots, log truncated below them", Make(20, 0, 5)},
                               Setup{"snapshots by bytes, no history kept", Make(0, 1500, 0)},
                               Setup{"group commit, snapshots, truncation", Make(25, 0, 3, false)});
  const uint64_t seed = GENERATE(1, 2, 3);
  INFO(setup.name << ", seed " << seed);
  TempDir dir;
  sync::testing::Editor editor(seed);
  sync::Snapshot before;
  uint64_t head = 0;
  for (int stretch = 0; stretch < 4; ++stretch) {
    Result<Store> opened = Store::Open(dir.path(), setup.options);
    REQUIRE(opened);
    Store& store = *opened;
    Result<sync::Document*> document = store.OpenDocument("doc", Kind::kObject);
    REQUIRE(document);
    if (stretch > 0) {
      CHECK(sync::TakeSnapshot(**document) == before);
      CHECK(store.Head("doc") == head);
    }
    for (int i = 0; i < 80; ++i) {
      editor.RandomEdit(**document);
      if (!setup.options.sync_every_commit && i % 7 == 0) store.Sync();
    }
    before = sync::TakeSnapshot(**document);
    head = store.Head("doc");
    // Every state passes validation: it rebuilds from its own snapshot.
    CHECK(sync::FromSnapshot(before));
  }
  Result<Store> store = Store::Open(dir.path(), setup.options);
  REQUIRE(store);
  Result<sync::Document*> document = store->OpenDocument("doc");
  REQUIRE(document);
  CHECK(sync::TakeSnapshot(**document) == before);
  auto info = store->Info("doc");
  REQUIRE(info);
  CHECK(info->head == head);
  CHECK(head > 150);
  if (setup.options.history_commits < 10 && info->snapshot > 0) CHECK(info->floor > 0);
}

TEST_CASE("a document reopens from a snapshot at its head, with no log after it",
          "[storage][reopen]") {
  TempDir dir;
  Options options = Make(0, 0, 0);
  sync::Snapshot before;
  {
    Store store = std::move(*Store::Open(dir.path(), options));
    sync::Document& document = **store.OpenDocument("doc", Kind::kArray);
    sync::testing::Editor editor(5);
    for (int i = 0; i < 100; ++i) editor.RandomEdit(document);
    REQUIRE(store.Snapshot("doc"));
    REQUIRE(store.Snapshot("doc"));  // At the head already: nothing.
    before = sync::TakeSnapshot(document);
    auto info = store.Info("doc");
    CHECK(info->snapshot == info->head);
    CHECK(info->floor == info->head);  // history_commits 0: no log left.
    CHECK(store.Since("doc", info->head - 1).error().reason == codec::Reason::kTruncated);
  }
  Store store = std::move(*Store::Open(dir.path(), options));
  CHECK(sync::TakeSnapshot(**store.OpenDocument("doc")) == before);
}

TEST_CASE("an empty document snapshots and reopens", "[storage][reopen]") {
  TempDir dir;
  Id root;
  {
    Store store = std::move(*Store::Open(dir.path()));
    sync::Document& document = **store.OpenDocument("doc", Kind::kMap);
    root = document.root().id();
    sync::Observable& child = document.Create(Kind::kArray);
    REQUIRE(document.Add(document.root(), child));  // An empty child.
    REQUIRE(document.RemoveEntry(document.root(), child.id()));
    REQUIRE(store.Snapshot("doc"));
  }
  Store store = std::move(*Store::Open(dir.path()));
  sync::Document& document = **store.OpenDocument("doc");
  CHECK(document.root().id() == root);
  CHECK(document.root().size() == 0);
}

}  // namespace
}  // namespace aweft::storage
