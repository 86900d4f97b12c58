#pragma once

// The Store's hidden half, shared by store.cc (opening, watching, syncing),
// recovery.cc (loading and snapshots) and history.cc (queries, remove,
// rename). Internal to storage/.

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "storage/format.h"
#include "storage/store.h"

namespace aweft::storage {

// An open document and where its log stands.
struct Store::Loaded {
  std::string name;
  format::Meta meta;
  format::Head head;  // In memory: pending commits included.
  uint64_t commits_since_snapshot = 0;
  uint64_t bytes_since_snapshot = 0;
  uint64_t snapshot_bytes = 0;  // The newest snapshot's size: see SnapshotDue().
  std::unique_ptr<sync::Document> document;
  uint64_t watch = 0;
  bool dirty = false;  // Has commits in `pending`.
};

// A document's stored description: meta and head.
struct Stored {
  format::Meta meta;
  format::Head head;
};

// What replaying a log found, for the snapshot triggers.
struct Replayed {
  uint64_t commits = 0;
  uint64_t bytes = 0;
  uint64_t snapshot_bytes = 0;  // The snapshot it started from.
};

// What one staged batch carries, and what Finish() needs of it.
struct Store::Batch::Impl {
  // A snapshot due once this batch is stored: built by PrepareSnapshots()
  // on the writer's thread, so that the store's thread does not replay a
  // log to make it.
  struct Prepared {
    std::string name;
    Stored stored;                     // As staged; the snapshot is at stored.head.head.
    std::optional<std::string> value;  // Built; none if Write() could not.
  };

  Store::Impl* store = nullptr;
  uint64_t ticket = 0;  // Its place in the write order.
  rocksdb::WriteBatch batch;
  uint64_t commits = 0;
  // Each document written, by name (it may be closed before Finish()), with
  // its head as this batch stores it.
  std::vector<std::pair<std::string, format::Head>> heads;
  bool written = false;
  std::optional<std::string> error;
  std::vector<Prepared> snapshots;
};

struct Store::Impl {
  // Syncs what is pending (logging a failure to stderr), then closes.
  ~Impl();

  Options options;
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::WriteOptions write_options;
  std::map<std::string, std::unique_ptr<Loaded>, std::less<>> loaded;

  // Commits not yet staged: log entries only; Stage() adds the heads.
  rocksdb::WriteBatch pending;
  std::vector<Loaded*> dirty;  // Each at most once.
  uint64_t next_number = 1;
  std::optional<std::string> failure;  // Set once the disk failed us.

  // For Stats(): commits in `pending`, and what was written since opening.
  uint64_t pending_commits = 0;
  uint64_t commits_written = 0, batches_written = 0, snapshots_written = 0;
  uint64_t snapshots_prepared = 0;

  // The write order (see Store::Stage): tickets are issued on the store's
  // thread; a batch is written only once every lower ticket is.
  uint64_t tickets_issued = 0;
  std::mutex order_mutex;
  std::condition_variable order_turn;
  uint64_t tickets_written = 0;              // GUARDED_BY(order_mutex)
  std::optional<std::string> order_failure;  // GUARDED_BY(order_mutex)
  std::optional<std::string> stalled;        // GUARDED_BY(order_mutex)
  std::atomic<bool> is_stalled{false};       // stalled.has_value(), read without the lock
  bool stop_retrying = false;                // GUARDED_BY(order_mutex)
  std::condition_variable retry_wake;        // StopRetrying() wakes a retry.
  // Writes `batch` (none: only waits) in `ticket`'s turn. Thread-safe.
  // Returns the disk's error; after one, later tickets write nothing and
  // return it too.
  std::optional<std::string> WriteInTurn(uint64_t ticket, rocksdb::WriteBatch* batch);

  // Throws the latched Failure, if any.
  void CheckLatch() const;
  // Throws Failure (and latches it) unless `status` is ok.
  void Check(const rocksdb::Status& status);
  // Writes `batch` as the durability mode says, in turn after every batch
  // staged before, or throws Failure.
  void Write(rocksdb::WriteBatch& batch);
  // The value under `key`, or nullopt.
  std::optional<std::string> Get(const std::string& key);
  // Refuses corrupt, naming `name`, for a damaged block; throws Failure for
  // any other error, or with `latch` false (off the store's thread) refuses
  // it as corrupt too, latching nothing.
  Result<void> CheckRead(std::string_view name, const rocksdb::Status& status, bool latch = true);

  // --- store.cc
  // A new document `name` with a fresh root, its records written (and
  // everything pending with them) before it is returned.
  std::unique_ptr<Loaded> Create(std::string_view name, Kind kind, const std::optional<Id>& root);
  void OnCommit(Loaded& document, const sync::Change& change);
  // Takes the pending commits, with the heads of their documents, into a
  // batch with the next ticket.
  std::unique_ptr<Batch::Impl> Stage();
  // Writes `batch` if not yet written, latches its failure, counts it, and
  // stages the snapshots it made due into `pending` (those Write() built,
  // and the rest built here).
  void Finish(Batch::Impl& batch);
  // Builds the batch's prepared snapshots from what is stored. Thread-safe
  // (it reads the database, never the open documents, and latches
  // nothing): Batch::PrepareSnapshots() calls it on the writer's thread
  // once the batch is stored. One that cannot be built is left for Finish().
  void BuildSnapshots(Batch::Impl& batch);
  void Sync();
  bool SnapshotDue(const Loaded& document) const;
  // Marks `document` as having something in `pending`.
  void MarkDirty(Loaded& document);

  // --- recovery.cc
  // Rebuilds `name` as it was right after commit `up_to`: the newest
  // snapshot at or below it, then the log after that. Refuses corrupt (a
  // damaged snapshot or entry, a gap) and truncated (history gone).
  // With `latch` false, as CheckRead's: safe off the store's thread.
  Result<std::unique_ptr<sync::Document>> Load(std::string_view name, const Stored& stored,
                                               uint64_t up_to, Replayed* replayed,
                                               bool latch = true);
  // The document as of the newest snapshot at or below `up_to` (an empty
  // root if there is none and the log is whole), and that snapshot's seq.
  struct Base {
    std::unique_ptr<sync::Document> document;
    uint64_t seq = 0;
    uint64_t bytes = 0;  // The snapshot's, stored.
  };
  Result<Base> LoadBase(std::string_view name, const Stored& stored, uint64_t up_to,
                        bool latch = true);
  // Applies the log entries after..up_to to `document`, refusing a gap.
  Result<void> Replay(std::string_view name, uint64_t number, uint64_t after, uint64_t up_to,
                      sync::Document& document, Replayed* replayed, bool latch = true);
  // Adds to `batch` the snapshot of `name` at `head.head`, built from what
  // is stored, and the deletion of the history below the window; gives
  // `head` the new snapshot and floor. REQUIRES: the log up to head.head is
  // stored. Nothing if the snapshot is at the head already. `built`, if
  // given, is that snapshot's value, built already (BuildSnapshots): taken.
  // `bytes`, if given, hears the snapshot's size.
  Result<void> AddSnapshot(std::string_view name, const format::Meta& meta, format::Head& head,
                           rocksdb::WriteBatch& batch, std::string* built = nullptr,
                           uint64_t* bytes = nullptr);
  // AddSnapshot() and the head record, written now. REQUIRES: nothing of it
  // pending.
  Result<void> WriteSnapshot(std::string_view name, const format::Meta& meta, format::Head& head,
                             uint64_t* bytes = nullptr);

  // --- history.cc
  // `name`'s meta and head (the open document's, if open); nullopt if there
  // is no such document; corrupt if they do not decode.
  Result<std::optional<Stored>> Find(std::string_view name);
  Loaded* FindLoaded(std::string_view name);
  void Unload(std::string_view name);
};

// "document 'name': detail", the start of every corrupt refusal.
std::string Named(std::string_view name, const std::string& detail);

}  // namespace aweft::storage
