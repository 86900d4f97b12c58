#include "storage/store.h"

#include <rocksdb/env.h>
#include <rocksdb/options.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "codec/commit.h"
#include "storage/store_impl.h"

namespace aweft::storage {

using codec::Reason;
using codec::Refusal;

namespace {

// See SnapshotDue().
constexpr uint64_t kLargeSnapshot = 8 << 20;

// True when `path` holds nothing but what RocksDB writes before CURRENT
// while it creates a database (its LOG, LOCK, IDENTITY, a first MANIFEST or
// OPTIONS file): a creation cut short, by a kill say, that stored nothing.
bool UnfinishedCreation(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(path, error)) {
    const std::string name = entry.path().filename().string();
    const bool rocksdb_own = name == "LOG" || name.starts_with("LOG.old.") || name == "LOCK" ||
                             name == "IDENTITY" || name.starts_with("MANIFEST-") ||
                             name.starts_with("OPTIONS-") || name.ends_with(".dbtmp");
    if (!rocksdb_own || !entry.is_regular_file(error)) return false;
  }
  return !error;
}

// Refuses a directory that is not a store of this format version. Opens it
// read-only, so nothing is written, and reads only the version key (and, if
// that is missing, whether there is any key at all).
Result<void> CheckVersion(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!fs::exists(path, error) || fs::is_empty(path, error)) return {};
  if (!fs::exists(fs::path(path) / "CURRENT", error)) {
    if (UnfinishedCreation(path)) return {};  // Created again from the start.

    return Refusal{Reason::kUnknownVersion,
                   "data directory " + path + " is not empty and holds no aweft store"};
  }
  rocksdb::DB* raw = nullptr;
  rocksdb::Status status = rocksdb::DB::OpenForReadOnly(rocksdb::Options(), path, &raw);
  if (!status.ok()) throw Failure("opening " + path + " to read its version: " + status.ToString());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::string version;
  status = db->Get(rocksdb::ReadOptions(), format::VersionKey(), &version);
  if (status.ok()) {
    if (version.size() == 4 && format::GetFixed32(version) == format::kVersion) return {};
    const std::string found =
        version.size() == 4 ? std::to_string(format::GetFixed32(version)) : "unreadable";
    return Refusal{Reason::kUnknownVersion,
                   "data directory " + path + " is in storage format version " + found +
                       "; this node reads version " + std::to_string(format::kVersion)};
  }
  if (!status.IsNotFound())
    throw Failure("reading the version of " + path + ": " + status.ToString());
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  it->SeekToFirst();
  if (!it->status().ok()) throw Failure("reading " + path + ": " + it->status().ToString());
  if (it->Valid()) {
    return Refusal{Reason::kUnknownVersion, "data directory " + path +
                                                " holds a RocksDB database with no aweft "
                                                "storage format version"};
  }
  return {};
}

// RocksDB's warnings and errors, a line at a time, to a function.
class LineLogger : public rocksdb::Logger {
 public:
  explicit LineLogger(std::function<void(const std::string&)> sink)
      : rocksdb::Logger(rocksdb::InfoLogLevel::WARN_LEVEL), sink_(std::move(sink)) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char line[1024];
    const int n = vsnprintf(line, sizeof line, format, ap);
    if (n > 0) sink_(std::string(line, std::min(static_cast<size_t>(n), sizeof line - 1)));
  }

 private:
  std::function<void(const std::string&)> sink_;
};

rocksdb::WriteOptions WriteOptionsFor(Durability durability) {
  rocksdb::WriteOptions options;
  options.sync = durability == Durability::kSync;
  options.disableWAL = durability == Durability::kNone;
  return options;
}

uint64_t NowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::string Named(std::string_view name, const std::string& detail) {
  return "document '" + std::string(name) + "': " + detail;
}

// --- Impl: the disk

void Store::Impl::CheckLatch() const {
  if (failure) throw Failure(*failure);
}

void Store::Impl::Check(const rocksdb::Status& status) {
  if (status.ok()) return;
  failure = "storage failed: " + status.ToString();
  throw Failure(*failure);
}

std::optional<std::string> Store::Impl::WriteInTurn(uint64_t ticket, rocksdb::WriteBatch* batch) {
  std::unique_lock lock(order_mutex);
  order_turn.wait(lock, [&] { return tickets_written + 1 == ticket || order_failure; });
  if (order_failure) return order_failure;
  // Our turn: the ones after us wait for tickets_written, not for the lock.
  lock.unlock();
  rocksdb::Status status = batch ? db->Write(write_options, batch) : rocksdb::Status::OK();
  lock.lock();
  // A full or read-only disk may come back: wait, clear RocksDB's error
  // (Resume) and write the same batch again. Those after it wait their turn.
  auto wait = std::chrono::milliseconds(10);
  while (status.IsIOError() && options.retry_failed_writes && !stop_retrying) {
    stalled = status.ToString();
    is_stalled = true;
    retry_wake.wait_for(lock, wait, [&] { return stop_retrying; });
    if (stop_retrying) break;
    wait = std::min(wait * 2, options.retry_interval);
    lock.unlock();
    // Busy: RocksDB's own recovery is under way; the error stands.
    if (rocksdb::Status resumed = db->Resume(); !resumed.IsBusy()) status = resumed;
    if (status.ok() && batch) status = db->Write(write_options, batch);
    lock.lock();
  }
  stalled.reset();
  is_stalled = false;
  if (!status.ok()) order_failure = "storage failed: " + status.ToString();
  tickets_written = ticket;
  order_turn.notify_all();
  return order_failure;
}

void Store::Impl::Write(rocksdb::WriteBatch& batch) {
  CheckLatch();
  if (auto error = WriteInTurn(++tickets_issued, &batch)) {
    failure = *error;
    throw Failure(*failure);
  }
}

std::optional<std::string> Store::Impl::Get(const std::string& key) {
  CheckLatch();
  std::string value;
  rocksdb::Status status = db->Get(rocksdb::ReadOptions(), key, &value);
  if (status.IsNotFound()) return std::nullopt;
  Check(status);
  return value;
}

// --- Impl: watching and group commit

void Store::Impl::OnCommit(Loaded& document, const sync::Change& change) {
  CheckLatch();
  const std::shared_ptr<const std::string>& encoded = change.Bytes();  // Shared with the links.
  if (!encoded) {
    // The document validated this commit; failing here is a bug, and the
    // commit cannot be stored: stop rather than lose it.
    std::string ignored;
    failure =
        Named(document.name, "a commit has no encoding: " +
                                 codec::EncodeCommit(change.commit, ignored).error().ToString());
    throw Failure(*failure);
  }
  const std::string& bytes = *encoded;
  // Invariant: seqs are assigned in delivery order, which is the order the
  // document applied the commits in (sync::Document delivers FIFO).
  const uint64_t seq = ++document.head.head;
  pending.Put(format::LogKey(document.meta.number, seq), bytes);
  ++pending_commits;
  ++document.commits_since_snapshot;
  document.bytes_since_snapshot += bytes.size();
  MarkDirty(document);
  if (options.sync_every_commit) Sync();
}

void Store::Impl::MarkDirty(Loaded& document) {
  if (document.dirty) return;
  document.dirty = true;
  dirty.push_back(&document);
}

std::unique_ptr<Store::Batch::Impl> Store::Impl::Stage() {
  CheckLatch();
  auto batch = std::make_unique<Batch::Impl>();
  batch->store = this;
  for (Loaded* document : dirty) {
    pending.Put(format::HeadKey(document->meta.number), format::EncodeHead(document->head));
    batch->heads.emplace_back(document->name, document->head);
    if (SnapshotDue(*document) && document->head.head > document->head.snapshot) {
      batch->snapshots.push_back({document->name, {document->meta, document->head}, std::nullopt});
    }
    document->dirty = false;
  }
  dirty.clear();
  batch->batch = std::move(pending);
  pending.Clear();
  batch->commits = pending_commits;
  pending_commits = 0;
  // Every batch takes a ticket, an empty one too: its Write() then waits
  // for the batches before it, which is what Sync() promises.
  batch->ticket = ++tickets_issued;
  return batch;
}

void Store::Impl::Finish(Batch::Impl& batch) {
  if (!batch.written) {
    batch.error = WriteInTurn(batch.ticket, batch.heads.empty() ? nullptr : &batch.batch);
    batch.written = true;
  }
  if (batch.error) {
    failure = *batch.error;
    throw Failure(*failure);
  }
  if (batch.commits > 0) ++batches_written;
  commits_written += batch.commits;
  for (auto& [name, stored] : batch.heads) {
    Loaded* document = FindLoaded(name);
    if (!document || !SnapshotDue(*document) || stored.head <= document->head.snapshot) continue;
    // Snapshot what this batch stored; it goes to disk with the next batch,
    // atomically with the head that names it, so the order of writes holds.
    format::Head head = stored;
    head.snapshot = std::max(head.snapshot, document->head.snapshot);
    head.floor = std::max(head.floor, document->head.floor);
    std::string* built = nullptr;
    for (auto& prepared : batch.snapshots) {
      if (prepared.name == name && prepared.stored.head.head == stored.head && prepared.value) {
        built = &*prepared.value;
      }
    }
    if (built) ++snapshots_prepared;
    // A stored log that no longer replays means the disk returned other
    // bytes than were written, or a bug: stop, loudly.
    if (auto added =
            AddSnapshot(name, document->meta, head, pending, built, &document->snapshot_bytes);
        !added) {
      failure = "cannot take a snapshot: " + added.error().ToString();
      throw Failure(*failure);
    }
    document->head.snapshot = head.snapshot;
    document->head.floor = head.floor;
    document->commits_since_snapshot = 0;
    document->bytes_since_snapshot = 0;
    MarkDirty(*document);
  }
}

bool Store::Impl::SnapshotDue(const Loaded& document) const {
  const uint64_t commits = options.snapshot_every_commits;
  const uint64_t bytes = options.snapshot_every_bytes;
  // A snapshot is a whole copy. After one over kLargeSnapshot, the next
  // waits until the log since is at least as large: so a large document's
  // snapshots write no more than its log does, and its disk use and write
  // cost stay linear, not size x commits (docs/storage.md "Options").
  if (document.snapshot_bytes > kLargeSnapshot &&
      document.bytes_since_snapshot < document.snapshot_bytes) {
    return false;
  }
  return (commits > 0 && document.commits_since_snapshot >= commits) ||
         (bytes > 0 && document.bytes_since_snapshot >= bytes);
}

void Store::Impl::Sync() {
  Finish(*Stage());
  // The snapshots that batch made due: written now too.
  if (!dirty.empty()) Finish(*Stage());
}

std::unique_ptr<Store::Loaded> Store::Impl::Create(std::string_view name, Kind kind,
                                                   const std::optional<Id>& root) {
  // Stored at once, so that a reopen finds the same root.
  auto document = std::make_unique<Loaded>();
  document->name = std::string(name);
  document->document =
      root ? std::make_unique<sync::Document>(*root, kind) : std::make_unique<sync::Document>(kind);
  document->meta = {next_number, document->document->root().id(), kind, NowMs()};
  rocksdb::WriteBatch batch;
  std::string next;
  format::PutFixed64(next, next_number + 1);
  batch.Put(format::NextNumberKey(), next);
  batch.Put(format::MetaKey(name), format::EncodeMeta(document->meta));
  batch.Put(format::HeadKey(document->meta.number), format::EncodeHead({}));
  Write(batch);
  ++next_number;
  return document;
}

// --- Store

Result<Store> Store::Open(const std::string& path, const Options& options) {
  if (auto checked = CheckVersion(path); !checked) return checked.error();
  // Made here, so RocksDB does not log an error for a missing directory.
  std::error_code made;
  std::filesystem::create_directories(path, made);
  rocksdb::Options db_options;
  db_options.create_if_missing = true;
  db_options.allow_fallocate = options.preallocate;
  // RocksDB does not resume by itself: a write that fails latches the store
  // (fail-stop) or is retried by WriteInTurn, which resumes it.
  db_options.max_bgerror_resume_count = 0;
  db_options.db_log_dir = options.rocksdb_log_dir;
  if (options.rocksdb_log) db_options.info_log = std::make_shared<LineLogger>(options.rocksdb_log);
  rocksdb::DB* raw = nullptr;
  rocksdb::Status status = rocksdb::DB::Open(db_options, path, &raw);
  if (!status.ok()) throw Failure("opening store " + path + ": " + status.ToString());
  auto impl = std::make_unique<Impl>();
  impl->db.reset(raw);
  impl->options = options;
  impl->write_options = WriteOptionsFor(options.durability);

  if (!impl->Get(format::VersionKey())) {  // A new store: CheckVersion saw no key.
    rocksdb::WriteBatch batch;
    std::string version;
    format::PutFixed32(version, format::kVersion);
    batch.Put(format::VersionKey(), version);
    std::string next;
    format::PutFixed64(next, 1);
    batch.Put(format::NextNumberKey(), next);
    rocksdb::WriteOptions sync;
    sync.sync = true;
    impl->Check(impl->db->Write(sync, &batch));
  }
  std::optional<std::string> next = impl->Get(format::NextNumberKey());
  if (!next || next->size() != 8)
    throw Failure("store " + path + ": its next document number is damaged");
  impl->next_number = format::GetFixed64(*next);
  return Store(std::move(impl));
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;

Store::~Store() = default;

// Here rather than in ~Store, so that a store assigned over closes the same way.
Store::Impl::~Impl() {
  try {
    if (!failure) {
      Finish(*Stage());
      // Without a WAL, only a flushed memtable is on disk; with one, a
      // flushed memtable is not replayed from it at the next open.
      Check(db->Flush(rocksdb::FlushOptions()));
    }
  } catch (const std::exception& e) {
    std::cerr << "storage: closing the store: " << e.what() << "\n";
  }
  loaded.clear();  // Documents go before the database.
}

Result<sync::Document*> Store::OpenDocument(std::string_view name, Kind kind_if_new,
                                            const std::optional<Id>& root_if_new) {
  impl_->CheckLatch();
  if (auto checked = format::CheckName(name); !checked) return checked.error();
  if (Loaded* open = impl_->FindLoaded(name)) return open->document.get();
  Result<std::optional<Stored>> found = impl_->Find(name);
  if (!found) return found.error();

  std::unique_ptr<Loaded> document;
  if (*found) {
    Replayed replayed;
    auto loaded = impl_->Load(name, **found, (*found)->head.head, &replayed);
    if (!loaded) return loaded.error();
    document = std::make_unique<Loaded>();
    document->name = std::string(name);
    document->meta = (*found)->meta;
    document->head = (*found)->head;
    document->document = std::move(*loaded);
    document->commits_since_snapshot = replayed.commits;
    document->bytes_since_snapshot = replayed.bytes;
    document->snapshot_bytes = replayed.snapshot_bytes;
  } else {
    document = impl_->Create(name, kind_if_new, root_if_new);
  }
  Loaded* raw = document.get();
  raw->watch = raw->document->Watch(
      [impl = impl_.get(), raw](const sync::Change& change) { impl->OnCommit(*raw, change); });
  impl_->loaded.emplace(raw->name, std::move(document));
  return raw->document.get();
}

void Store::CloseDocument(std::string_view name) {
  impl_->Sync();
  impl_->Unload(name);
}

void Store::Sync() { impl_->Sync(); }

Store::Batch Store::Stage() {
  Batch batch;
  batch.impl_ = impl_->Stage();
  return batch;
}

void Store::Finish(Batch batch) {
  if (batch.impl_) impl_->Finish(*batch.impl_);
}

bool Store::pending() const { return !impl_->dirty.empty(); }

std::optional<std::string> Store::Stalled() const {
  if (!impl_->is_stalled) return std::nullopt;  // Per commit: no lock when all is well.
  std::lock_guard lock(impl_->order_mutex);
  return impl_->stalled;
}

void Store::StopRetrying() {
  std::lock_guard lock(impl_->order_mutex);
  impl_->stop_retrying = true;
  impl_->retry_wake.notify_all();
}

Store::Batch::Batch() = default;
Store::Batch::Batch(Batch&&) noexcept = default;
Store::Batch& Store::Batch::operator=(Batch&&) noexcept = default;
Store::Batch::~Batch() = default;

uint64_t Store::Batch::commits() const { return impl_ ? impl_->commits : 0; }

std::optional<std::string> Store::Batch::Write() {
  if (!impl_ || impl_->written) return impl_ ? impl_->error : std::nullopt;
  impl_->error =
      impl_->store->WriteInTurn(impl_->ticket, impl_->heads.empty() ? nullptr : &impl_->batch);
  impl_->written = true;
  return impl_->error;
}

void Store::Batch::PrepareSnapshots() {
  if (impl_ && impl_->written && !impl_->error) impl_->store->BuildSnapshots(*impl_);
}

Result<void> Store::Snapshot(std::string_view name) {
  impl_->Sync();
  Result<std::optional<Stored>> found = impl_->Find(name);
  if (!found) return found.error();
  if (!*found) return Refusal{Reason::kNoDocument, Named(name, "there is no such document")};
  Loaded* open = impl_->FindLoaded(name);
  format::Head& head = open ? open->head : (*found)->head;
  uint64_t bytes = 0;
  if (auto written = impl_->WriteSnapshot(name, (*found)->meta, head, &bytes); !written) {
    return written;
  }
  if (open && bytes > 0) open->snapshot_bytes = bytes;
  if (open) open->commits_since_snapshot = open->bytes_since_snapshot = 0;
  return {};
}

StoreStats Store::Stats(bool with_rocksdb) const {
  StoreStats stats;
  stats.commits_written = impl_->commits_written;
  stats.batches_written = impl_->batches_written;
  stats.snapshots_written = impl_->snapshots_written;
  stats.snapshots_prepared = impl_->snapshots_prepared;
  if (!with_rocksdb) return stats;
  auto property = [&](const std::string& name) {
    uint64_t value = 0;
    impl_->db->GetIntProperty(name, &value);  // Unknown or unavailable: 0.
    return value;
  };
  stats.live_sst_bytes = property(rocksdb::DB::Properties::kLiveSstFilesSize);
  stats.memtable_bytes = property(rocksdb::DB::Properties::kCurSizeAllMemTables);
  stats.estimated_keys = property(rocksdb::DB::Properties::kEstimateNumKeys);
  stats.pending_compaction_bytes =
      property(rocksdb::DB::Properties::kEstimatePendingCompactionBytes);
  stats.running_compactions = property(rocksdb::DB::Properties::kNumRunningCompactions);
  stats.running_flushes = property(rocksdb::DB::Properties::kNumRunningFlushes);
  stats.level0_files = property(rocksdb::DB::Properties::kNumFilesAtLevelPrefix + std::string("0"));
  stats.background_errors = property(rocksdb::DB::Properties::kBackgroundErrors);
  stats.table_readers_bytes = property(rocksdb::DB::Properties::kEstimateTableReadersMem);
  return stats;
}

void Store::Compact() {
  impl_->CheckLatch();
  rocksdb::CompactRangeOptions options;
  options.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  impl_->Check(impl_->db->CompactRange(options, nullptr, nullptr));
}

}  // namespace aweft::storage
