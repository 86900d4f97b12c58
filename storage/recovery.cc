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

Result<void> Store::Impl::CheckRead(std::string_view name, const rocksdb::Status& status,
                                    bool latch) {
  // A damaged block is that document's corruption; any other error the disk's.
  if (status.IsCorruption() || (!latch && !status.ok())) {
    return Refusal{Reason::kCorrupt, Named(name, "RocksDB reports " + status.ToString())};
  }
  Check(status);
  return {};
}

Result<Store::Impl::Base> Store::Impl::LoadBase(std::string_view name, const Stored& stored,
                                                uint64_t up_to, bool latch) {
  const uint64_t number = stored.meta.number;
  Base base;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  it->SeekForPrev(format::SnapshotKey(number, up_to));
  if (auto read = CheckRead(name, it->status(), latch); !read) return read.error();
  auto seq = it->Valid() ? format::SeqOfKey(it->key().ToStringView(), format::kSnapshotTag, number)
                         : std::nullopt;
  if (seq) {
    auto decoded = DecodeSnapshot(it->value().ToStringView(), stored.meta, *seq);
    if (!decoded) {
      return Refusal{Reason::kCorrupt,
                     Named(name, "the snapshot at " + Seq(*seq) +
                                     " is unreadable: " + decoded.error().message)};
    }
    base.document = std::move(*decoded);
    base.seq = *seq;
    base.bytes = it->value().size();
  }
  if (base.seq < stored.head.floor) {
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
  if (!base.document) {
    base.document = std::make_unique<sync::Document>(stored.meta.root, stored.meta.kind);
  }
  return base;
}

Result<void> Store::Impl::Replay(std::string_view name, uint64_t number, uint64_t after,
                                 uint64_t up_to, sync::Document& document, Replayed* replayed,
                                 bool latch) {
  const std::string upper = format::LogKey(number, up_to + 1);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions options;
  options.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(options));
  uint64_t expected = after + 1;
  for (it->Seek(format::LogKey(number, expected)); it->Valid(); it->Next(), ++expected) {
    const std::string entry = "the log entry at " + Seq(expected);
    if (format::SeqOfKey(it->key().ToStringView(), format::kLogTag, number) != expected) {
      return Refusal{Reason::kCorrupt, Named(name, entry + " is missing")};
    }
    const std::string_view bytes = it->value().ToStringView();
    Result<Commit> commit = codec::DecodeCommit(bytes);
    if (!commit) {
      return Refusal{Reason::kCorrupt,
                     Named(name, entry + " does not decode: " + commit.error().ToString())};
    }
    if (auto applied = document.Apply(*commit); !applied) {
      return Refusal{Reason::kCorrupt,
                     Named(name, entry + " does not apply: " + applied.error().ToString())};
    }
    if (replayed) {
      ++replayed->commits;
      replayed->bytes += bytes.size();
    }
  }
  if (auto read = CheckRead(name, it->status(), latch); !read) return read;
  if (expected != up_to + 1) {
    return Refusal{Reason::kCorrupt, Named(name, "the log ends at " + Seq(expected - 1) +
                                                     ", before its head at " + Seq(up_to))};
  }
  return {};
}

Result<std::unique_ptr<sync::Document>> Store::Impl::Load(std::string_view name,
                                                          const Stored& stored, uint64_t up_to,
                                                          Replayed* replayed, bool latch) {
  if (latch) CheckLatch();
  Result<Base> base = LoadBase(name, stored, up_to, latch);
  if (!base) return base.error();
  if (replayed) replayed->snapshot_bytes = base->bytes;
  if (auto replay =
          Replay(name, stored.meta.number, base->seq, up_to, *base->document, replayed, latch);
      !replay) {
    return replay.error();
  }
  return std::move(base->document);
}

Result<void> Store::Impl::AddSnapshot(std::string_view name, const format::Meta& meta,
                                      format::Head& head, rocksdb::WriteBatch& batch,
                                      std::string* built, uint64_t* bytes) {
  if (head.head == head.snapshot) return {};
  // Built from what is stored, not from the open document: a watcher may
  // have written ahead of what the store has heard, and a snapshot that
  // replays is one the next open can read.
  std::string value;
  if (built) {
    value = std::move(*built);
  } else {
    auto document = Load(name, {meta, head}, head.head, nullptr);
    if (!document) return document.error();
    value = EncodeSnapshot(**document, head.head, options.snapshot_compression_level).value;
  }

  format::Head next = head;
  next.snapshot = head.head;
  if (bytes) *bytes = value.size();
  batch.Put(format::SnapshotKey(meta.number, next.snapshot), value);
  const uint64_t keep = options.history_commits;
  const uint64_t floor = next.snapshot > keep ? next.snapshot - keep : 0;
  if (floor > next.floor) {
    // Log entries floor' + 1 .. floor, and snapshots nothing can use now
    // (the log after them is gone).
    batch.DeleteRange(format::LogKey(meta.number, next.floor + 1),
                      format::LogKey(meta.number, floor + 1));
    batch.DeleteRange(format::SnapshotKey(meta.number, 0), format::SnapshotKey(meta.number, floor));
    next.floor = floor;
  }
  head = next;
  ++snapshots_written;
  return {};
}

void Store::Impl::BuildSnapshots(Batch::Impl& batch) {
  for (Batch::Impl::Prepared& prepared : batch.snapshots) {
    const uint64_t at = prepared.stored.head.head;
    // What cannot be built here (the document removed meanwhile, history
    // dropped by a snapshot asked for meanwhile, a read error) Finish()
    // builds again, or skips, and reports.
    auto document = Load(prepared.name, prepared.stored, at, nullptr, /*latch=*/false);
    if (!document) continue;
    try {
      prepared.value = EncodeSnapshot(**document, at, options.snapshot_compression_level).value;
    } catch (const Failure&) {
    }
  }
}

Result<void> Store::Impl::WriteSnapshot(std::string_view name, const format::Meta& meta,
                                        format::Head& head, uint64_t* bytes) {
  rocksdb::WriteBatch batch;
  format::Head next = head;
  if (auto added = AddSnapshot(name, meta, next, batch, nullptr, bytes); !added) return added;
  if (next.snapshot == head.snapshot) return {};
  batch.Put(format::HeadKey(meta.number), format::EncodeHead(next));
  Write(batch);
  head = next;
  return {};
}

}  // namespace aweft::storage
