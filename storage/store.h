#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codec/result.h"
#include "codec/value.h"
#include "sync/document.h"
#include "sync/snapshot.h"

namespace aweft::storage {

using codec::Commit;
using codec::Id;
using codec::Kind;
using codec::Result;

// Thrown when the disk fails us (an I/O error, no space, a failed sync). The
// node cannot go on safely: main() logs it and exits non-zero. After one is
// thrown the store is latched: every later call throws it again.
class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// When a commit counts as stored (docs/storage.md, "Durability").
enum class Durability {
  // The commit is in the write-ahead log and the log is fsynced: it survives
  // a process crash, an OS crash and a power loss.
  kSync,
  // The commit is in the write-ahead log, not fsynced: it survives a process
  // crash; an OS crash or power loss may lose the newest commits.
  kWal,
  // No write-ahead log: a crash of any kind may lose every commit since
  // RocksDB last flushed its memtable. A clean close loses nothing.
  kNone,
};

struct Options {
  // Default: Durability::kSync.
  Durability durability = Durability::kSync;

  // Sync() after every commit, from inside the store's watcher, so that a
  // write returns only once it is stored. The node turns this off and calls
  // Sync() once per turn of its loop instead (group commit).
  // Default: true.
  bool sync_every_commit = true;

  // A snapshot is written once this many commits, or this many bytes of
  // log, have accumulated since the last one. 0 turns that trigger off.
  // Default: 10000 commits, 8 MiB.
  uint64_t snapshot_every_commits = 10000;
  uint64_t snapshot_every_bytes = 8 << 20;

  // Commits of log kept below the newest snapshot, for Since() and StateAt();
  // older entries are dropped when a snapshot is written.
  // Default: 10000.
  uint64_t history_commits = 10000;

  // Let RocksDB preallocate its files (allow_fallocate): each WAL takes
  // 1.1 x the 64 MiB memtable on disk at once, so an empty store takes
  // 75 MB. Kept on: without it a WAL append can meet a full disk, and
  // RocksDB 7.8 then does not resume once space returns (the full-disk test
  // in tests/node/node_disk_test.cc fails); with it the WAL's room is taken
  // up front. Syncs cost the same either way (benchmarks/RESULTS.md).
  // Default: true.
  bool preallocate = true;

  // zstd level for snapshots (1 fastest .. 19 smallest).
  // Default: 3.
  int snapshot_compression_level = 3;

  // Where RocksDB writes its info LOG. On a full disk, RocksDB 7.8 (built
  // with assertions, as Debian's is) aborts when that LOG shares the failing
  // disk, instead of reporting the error: the node stops either way.
  // Default: empty, the data directory.
  std::string rocksdb_log_dir;

  // When set, RocksDB's warnings and errors go to it, one line each, and it
  // writes no info LOG file (rocksdb_log_dir is then unused): a full disk
  // cannot reach the log. Called from any thread. Default: unset.
  std::function<void(const std::string& line)> rocksdb_log;

  // A write the disk fails with an I/O error (no space, a read-only file
  // system) is retried, every `retry_interval` at most, until it succeeds
  // or StopRetrying(); meanwhile Stalled() says why, and the callers that
  // write wait. Off: the failure is thrown and latches the store
  // (fail-stop). Corruption is never retried. Default: off, 1 s.
  bool retry_failed_writes = false;
  std::chrono::milliseconds retry_interval{1000};
};

// What the admin endpoint shows about one stored document.
struct DocumentInfo {
  std::string name;
  Id root;
  Kind kind = Kind::kObject;
  uint64_t head = 0;               // The newest commit's seq (0: none yet).
  uint64_t snapshot = 0;           // The newest snapshot's seq (0: none).
  uint64_t floor = 0;              // Since(seq) reaches back to seq == floor.
  uint64_t created_ms = 0;         // Unix time of creation, milliseconds.
  uint64_t approximate_bytes = 0;  // Log and snapshots on disk, roughly.
  uint64_t snapshot_bytes = 0;     // The newest snapshot's stored size.
  bool loaded = false;             // Open in this store now.
  size_t observables = 0;          // When loaded: observables, root included.
  // Empty, or the corrupt refusal its damaged meta or head record earns
  // (then only `name`, and what the meta record still tells, are set).
  std::string damage;
};

// What the store has done since it opened, and RocksDB's own figures worth
// watching (the node's /metrics). The RocksDB half is 0 unless asked for.
struct StoreStats {
  uint64_t commits_written = 0;     // Commits written to the database.
  uint64_t batches_written = 0;     // Batches that carried commits (one sync each).
  uint64_t snapshots_written = 0;   // Snapshots written, by count or size or asked.
  uint64_t snapshots_prepared = 0;  // Of those, built by Batch::PrepareSnapshots().

  uint64_t live_sst_bytes = 0;            // rocksdb.live-sst-files-size
  uint64_t memtable_bytes = 0;            // rocksdb.cur-size-all-mem-tables
  uint64_t estimated_keys = 0;            // rocksdb.estimate-num-keys
  uint64_t pending_compaction_bytes = 0;  // rocksdb.estimate-pending-compaction-bytes
  uint64_t running_compactions = 0;       // rocksdb.num-running-compactions
  uint64_t running_flushes = 0;           // rocksdb.num-running-flushes
  uint64_t level0_files = 0;              // rocksdb.num-files-at-level0
  uint64_t background_errors = 0;         // rocksdb.background-errors
  uint64_t table_readers_bytes = 0;       // rocksdb.estimate-table-readers-mem
};

// One entry of a document's history.
struct Entry {
  uint64_t seq;
  Commit commit;
};

// Many documents, by name, in one RocksDB database, each held as a commit
// log plus snapshots (docs/storage.md). The store owns the documents it
// opens and watches each: every commit one takes part in, local or applied,
// is appended to its log under the next seq, once, in order.
//
// Refusals (Result) are for what a caller or a peer got wrong: a bad name, a
// missing document, history that no longer reaches, a damaged document.
// A disk failure throws Failure and latches the store.
//
// Not thread-safe: use the store and its documents from one thread (the
// store's thread), but for Batch::Write() and PrepareSnapshots(). Movable, not copyable; Document
// pointers stay valid across a move.
class Store {
 public:
  // Opens the store in directory `path`, creating it if missing or empty.
  // Refuses with unknown-version a directory written in another format
  // version, or holding something else, before reading or writing anything
  // more. Throws Failure for an I/O error (or a directory in use).
  static Result<Store> Open(const std::string& path, const Options& options = {});

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  // Syncs what is pending (call Sync() first to hear of a failure: the
  // destructor only logs it), then closes every document.
  ~Store();

  // The document `name`: the open one if it is open; else the stored one,
  // loaded from its newest snapshot and the log after it, with the same ids
  // and positions; else a new one with a fresh root of `kind_if_new`, stored
  // at once. The store owns it; the pointer is valid until CloseDocument(),
  // Remove() or the store's end. Refuses invalid-name, and corrupt (naming
  // the document and the seq) when its snapshot or log cannot be read; other
  // documents are not affected.
  // With `root_if_new`, a new document's root takes that id (a replica of a
  // document made elsewhere).
  Result<sync::Document*> OpenDocument(std::string_view name, Kind kind_if_new = Kind::kObject,
                                       const std::optional<Id>& root_if_new = std::nullopt);

  // Syncs `name`'s pending commits, stops watching it and frees it. Nothing
  // if it is not open. REQUIRES: not called from a watcher of that document.
  void CloseDocument(std::string_view name);

  // Writes every pending commit of every document in one atomic batch and
  // returns once it is stored as `durability` says (one fsync for all under
  // kSync); then writes the snapshots that are due. Throws Failure if the
  // disk fails, and nothing pending is then reported as stored.
  // Sync() is Finish(Stage()): it waits for batches being written elsewhere.
  void Sync();

  // Group commit on a thread of the caller's (the node's storage thread):
  // Stage() takes everything pending into a batch, Batch::Write() stores it
  // on that other thread while this one goes on committing, and Finish(),
  // back on this thread, counts it and stages the snapshots it made due.
  // Batches are stored in the order they were staged, whoever writes them:
  // a Write() waits for every batch staged before it, and so does every
  // other call that writes (Sync(), CloseDocument(), Remove(), ...).
  class Batch;
  Batch Stage();
  // Writes `batch` first if nobody has. Throws Failure, latching it, if the
  // write failed. REQUIRES: every batch staged is written, by its holder
  // or by Finish(), or calls that wait for it (Sync()) wait forever.
  void Finish(Batch batch);
  // True when commits wait to be staged.
  bool pending() const;

  // With Options::retry_failed_writes: the disk's error while a write is
  // being retried ("IO error: No space left on device: ..."), else
  // nothing. Thread-safe.
  std::optional<std::string> Stalled() const;
  // A write being retried fails now (throwing Failure where it is waited
  // for, and latching), and none is retried again: for shutting down on a
  // disk that does not come back. Thread-safe.
  void StopRetrying();

  // Writes a snapshot of `name` at its head now (after syncing), then drops
  // the log below the retained history. Nothing if the newest snapshot is at
  // the head already. Refuses no-document, corrupt.
  Result<void> Snapshot(std::string_view name);

  // The commits after `seq`, oldest first, at most `limit` of them. Empty
  // when `seq` is at or past the head. Refuses truncated when the log no
  // longer reaches back to seq + 1, no-document, corrupt.
  Result<std::vector<Entry>> Since(std::string_view name, uint64_t seq,
                                   size_t limit = std::numeric_limits<size_t>::max());

  // The document's state right after commit `seq` (0: the empty root).
  // Refuses truncated when no snapshot and log reach back that far,
  // no-document (also for a seq past the head), corrupt.
  Result<sync::Snapshot> StateAt(std::string_view name, uint64_t seq);

  // The newest seq of `name` (pending commits included); 0 if none or no
  // such document.
  uint64_t Head(std::string_view name);

  // One document's figures; nullopt if there is no such document. Cheap: it
  // reads the records, not the log (a damaged log shows at OpenDocument).
  std::optional<DocumentInfo> Info(std::string_view name);

  // Stored documents whose names start with `prefix` and sort after `after`,
  // in name order (bytewise), at most `limit`.
  std::vector<DocumentInfo> List(std::string_view prefix = {}, std::string_view after = {},
                                 size_t limit = std::numeric_limits<size_t>::max());

  // Deletes `name` with its log and snapshots, closing it first if open (its
  // Document pointer dies). Refuses no-document.
  Result<void> Remove(std::string_view name);

  // Gives document `from` the name `to`; an open document stays open, the
  // same object. Refuses no-document, and invalid-name for a bad `to` or one
  // already taken.
  Result<void> Rename(std::string_view from, std::string_view to);

  // Compacts the whole database, reclaiming what dropped history held.
  void Compact();

  // Counters since opening; with `with_rocksdb`, RocksDB's figures too (which
  // ask the database, so call that at scrape time, not per commit).
  StoreStats Stats(bool with_rocksdb = false) const;

 private:
  struct Impl;
  struct Loaded;
  explicit Store(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

// Commits staged by Store::Stage(), to be stored by Write() on any thread.
// REQUIRES: the store outlives the batch's Write() and PrepareSnapshots().
class Store::Batch {
 public:
  Batch();
  Batch(Batch&&) noexcept;
  Batch& operator=(Batch&&) noexcept;
  ~Batch();

  // The commits it carries (0: only heads or snapshots, or nothing).
  uint64_t commits() const;
  // Stores it as the store's durability says, after every batch staged
  // before it. Thread-safe: the one store call that may run on another
  // thread than the store's. Returns the disk's error, if any (Finish()
  // throws it); a batch after a failed one is not written either.
  std::optional<std::string> Write();
  // After Write(), on the same thread: builds the snapshots this batch made
  // due, from what is stored, so that Finish() only files them and the
  // store's thread never replays a log for one. Optional: Finish() builds
  // what was not. Thread-safe as Write() is.
  void PrepareSnapshots();

 private:
  friend class Store;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace aweft::storage
