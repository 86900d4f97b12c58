// Loading a document from its newest snapshot and the log after it, and
// writing snapshots.

#include "codec/commit.h"
#include "storage/snapshot_codec.h"
#include "storage/store_impl.h"

namespace aweft::storage {

using codec::Reason;
using codec::Refusal;

namespace {

std::string Seq(uint64_t seq) { return "seq " + std::to_string(seq); }

}  // namespace

Result<void> Store::Impl::CheckRead(std::string_view name, const rocksdb::Status& status) {
  // A damaged block is that document's corruption; any other error the disk's.
  if (status.IsCorruption()) {
    return Refusal{Reason::kCorrupt, Named(name, "RocksDB reports " + status.ToString())};
  }
  Check(status);
  return {};
}

Result<std::unique_ptr<sync::Document>> Store::Impl::Load(std::string_view name,
                                                          const Stored& stored,
                                                          uint64_t up_to,
                                                          Replayed* replayed) {
  CheckLatch();
  const uint64_t number = stored.meta.number;
  std::unique_ptr<sync::Document> document;
  uint64_t base = 0;

  // The newest snapshot at or below `up_to`.
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  it->SeekForPrev(format::SnapshotKey(number, up_to));
  if (auto read = CheckRead(name, it->status()); !read) return read.error();
  if (it->Valid()) {
    if (auto seq = format::SeqOfKey(it->key().ToStringView(), format::kSnapshotTag, number)) {
      auto decoded = DecodeSnapshot(it->value().ToStringView(), stored.meta, *seq);
      if (!decoded) {
        return Refusal{Reason::kCorrupt, Named(name, "the snapshot at " + Seq(*seq) +
                                                         " is unreadable: " +
                                                         decoded.error().message)};
      }
      document = std::move(*decoded);
      base = *seq;
    }
  }
  if (base < stored.head.floor) {
    // At the head, a missing snapshot is damage; below it, history gone.
    if (up_to == stored.head.head) {
      return Refusal{Reason::kCorrupt,
                     Named(name, "its log starts after " + Seq(stored.head.floor) +
                                     " and no snapshot reaches there")};
    }
    return Refusal{Reason::kTruncated,
                   Named(name, "its history reaches back to " + Seq(stored.head.floor) +
                                   ", not to " + Seq(up_to))};
  }
  if (!document) document = std::make_unique<sync::Document>(stored.meta.root, stored.meta.kind);

  // Then every entry after it, each exactly once, without a gap.
  const std::string upper = format::LogKey(number, up_to + 1);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions options;
  options.iterate_upper_bound = &upper_slice;
  it.reset(db->NewIterator(options));
  uint64_t expected = base + 1;
  for (it->Seek(format::LogKey(number, expected)); it->Valid(); it->Next(), ++expected) {
    auto seq = format::SeqOfKey(it->key().ToStringView(), format::kLogTag, number);
    if (seq != expected) {
      return Refusal{Reason::kCorrupt, Named(name, "the log entry at " + Seq(expected) +
                                                       " is missing")};
    }
    const std::string_view bytes = it->value().ToStringView();
    Result<Commit> commit = codec::DecodeCommit(bytes);
    if (!commit) {
      return Refusal{Reason::kCorrupt, Named(name, "the log entry at " + Seq(expected) +
                                                       " does not decode: " +
                                                       commit.error().ToString())};
    }
    if (auto applied = document->Apply(*commit); !applied) {
      return Refusal{Reason::kCorrupt, Named(name, "the log entry at " + Seq(expected) +
                                                       " does not apply: " +
                                                       applied.error().ToString())};
    }
    if (replayed) {
      ++replayed->commits;
      replayed->bytes += bytes.size();
    }
  }
  if (auto read = CheckRead(name, it->status()); !read) return read.error();
  if (expected != up_to + 1) {
    return Refusal{Reason::kCorrupt, Named(name, "the log ends at " + Seq(expected - 1) +
                                                     ", before its head at " + Seq(up_to))};
  }
  return document;
}

Result<void> Store::Impl::WriteSnapshot(std::string_view name, const format::Meta& meta,
                                        format::Head& head) {
  if (head.head == head.snapshot) return {};
  // Built from what is stored, not from the open document: a watcher may
  // have written ahead of what the store has heard, and a snapshot that
  // replays is one the next open can read.
  auto document = Load(name, {meta, head}, head.head, nullptr);
  if (!document) return document.error();
  EncodedSnapshot snapshot =
      EncodeSnapshot(**document, head.head, options.snapshot_compression_level);

  format::Head next = head;
  next.snapshot = head.head;
  rocksdb::WriteBatch batch;
  batch.Put(format::SnapshotKey(meta.number, next.snapshot), snapshot.value);
  const uint64_t keep = options.history_commits;
  const uint64_t floor = next.snapshot > keep ? next.snapshot - keep : 0;
  if (floor > next.floor) {
    // Log entries floor' + 1 .. floor, and snapshots nothing can use now
    // (the log after them is gone).
    batch.DeleteRange(format::LogKey(meta.number, next.floor + 1),
                      format::LogKey(meta.number, floor + 1));
    batch.DeleteRange(format::SnapshotKey(meta.number, 0),
                      format::SnapshotKey(meta.number, floor));
    next.floor = floor;
  }
  batch.Put(format::HeadKey(meta.number), format::EncodeHead(next));
  Write(batch);
  head = next;
  return {};
}

}  // namespace aweft::storage
