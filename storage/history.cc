// Reading a document's history and figures, removing and renaming.

#include <algorithm>

#include "codec/commit.h"
#include "storage/store_impl.h"

namespace aweft::storage {

using codec::Reason;
using codec::Refusal;

namespace {

Refusal NoDocument(std::string_view name) {
  return Refusal{Reason::kNoDocument, Named(name, "there is no such document")};
}

// The first key after every key that starts with `prefix`; empty if none.
std::string Successor(std::string prefix) {
  while (!prefix.empty() && static_cast<uint8_t>(prefix.back()) == 0xff) prefix.pop_back();
  if (!prefix.empty()) prefix.back() = static_cast<char>(prefix.back() + 1);
  return prefix;
}

}  // namespace

// --- Impl

Store::Loaded* Store::Impl::FindLoaded(std::string_view name) {
  auto it = loaded.find(name);
  return it == loaded.end() ? nullptr : it->second.get();
}

void Store::Impl::Unload(std::string_view name) {
  auto it = loaded.find(name);
  if (it == loaded.end()) return;
  it->second->document->Unwatch(it->second->watch);
  loaded.erase(it);
}

Result<std::optional<Stored>> Store::Impl::Find(std::string_view name) {
  if (Loaded* open = FindLoaded(name)) return std::optional<Stored>(Stored{open->meta, open->head});
  std::optional<std::string> meta_value = Get(format::MetaKey(name));
  if (!meta_value) return std::optional<Stored>();
  std::optional<format::Meta> meta = format::DecodeMeta(*meta_value);
  if (!meta) return Refusal{Reason::kCorrupt, Named(name, "its meta record is damaged")};
  std::optional<std::string> head_value = Get(format::HeadKey(meta->number));
  std::optional<format::Head> head = head_value ? format::DecodeHead(*head_value) : std::nullopt;
  if (!head) return Refusal{Reason::kCorrupt, Named(name, "its head record is missing or damaged")};
  return std::optional<Stored>(Stored{*meta, *head});
}

// --- Store

Result<std::vector<Entry>> Store::Since(std::string_view name, uint64_t seq, size_t limit) {
  impl_->Sync();  // What is pending is read back from the database.
  Result<std::optional<Stored>> found = impl_->Find(name);
  if (!found) return found.error();
  if (!*found) return NoDocument(name);
  const format::Head& head = (*found)->head;
  std::vector<Entry> entries;
  if (seq >= head.head || limit == 0) return entries;
  if (seq < head.floor) {
    return Refusal{Reason::kTruncated,
                   Named(name, "its history starts after seq " + std::to_string(head.floor) +
                                   ", so it cannot answer from seq " + std::to_string(seq))};
  }
  const uint64_t number = (*found)->meta.number;
  const uint64_t last = seq + std::min<uint64_t>(limit, head.head - seq);
  const std::string upper = format::LogKey(number, last + 1);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions options;
  options.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(options));
  uint64_t expected = seq + 1;
  for (it->Seek(format::LogKey(number, expected)); it->Valid(); it->Next(), ++expected) {
    const std::string detail = "the log entry at seq " + std::to_string(expected);
    if (format::SeqOfKey(it->key().ToStringView(), format::kLogTag, number) != expected) {
      return Refusal{Reason::kCorrupt, Named(name, detail + " is missing")};
    }
    Result<Commit> commit = codec::DecodeCommit(it->value().ToStringView());
    if (!commit) {
      return Refusal{Reason::kCorrupt,
                     Named(name, detail + " does not decode: " + commit.error().ToString())};
    }
    entries.push_back({expected, std::move(*commit)});
  }
  if (auto read = impl_->CheckRead(name, it->status()); !read) return read.error();
  if (expected != last + 1) {
    return Refusal{Reason::kCorrupt,
                   Named(name, "the log entry at seq " + std::to_string(expected) + " is missing")};
  }
  return entries;
}

Result<sync::Snapshot> Store::StateAt(std::string_view name, uint64_t seq) {
  impl_->Sync();
  Result<std::optional<Stored>> found = impl_->Find(name);
  if (!found) return found.error();
  if (!*found) return NoDocument(name);
  if (seq > (*found)->head.head) {
    return Refusal{Reason::kNoDocument,
                   Named(name, "it has no seq " + std::to_string(seq) + "; its head is seq " +
                                   std::to_string((*found)->head.head))};
  }
  auto document = impl_->Load(name, **found, seq, nullptr);
  if (!document) return document.error();
  return sync::TakeSnapshot(**document);
}

uint64_t Store::Head(std::string_view name) {
  Result<std::optional<Stored>> found = impl_->Find(name);
  return found && *found ? (*found)->head.head : 0;
}

std::optional<DocumentInfo> Store::Info(std::string_view name) {
  Result<std::optional<Stored>> found = impl_->Find(name);
  DocumentInfo info;
  info.name = std::string(name);
  if (!found) {
    info.damage = found.error().ToString();
    return info;
  }
  if (!*found) return std::nullopt;
  const auto& [meta, head] = **found;
  info.root = meta.root;
  info.kind = meta.kind;
  info.head = head.head;
  info.snapshot = head.snapshot;
  info.floor = head.floor;
  info.created_ms = meta.created_ms;
  if (Loaded* open = impl_->FindLoaded(name)) {
    info.loaded = true;
    info.observables = open->document->observable_count();
  }
  if (head.snapshot > 0) {
    auto value = impl_->Get(format::SnapshotKey(meta.number, head.snapshot));
    info.snapshot_bytes = value ? value->size() : 0;
  }
  const std::string keys[] = {format::LogKey(meta.number, 0), format::LogKey(meta.number + 1, 0),
                              format::SnapshotKey(meta.number, 0),
                              format::SnapshotKey(meta.number + 1, 0)};
  rocksdb::Range ranges[] = {{keys[0], keys[1]}, {keys[2], keys[3]}};
  uint64_t sizes[2] = {0, 0};
  rocksdb::SizeApproximationOptions options;
  options.include_memtables = true;
  impl_->Check(
      impl_->db->GetApproximateSizes(options, impl_->db->DefaultColumnFamily(), ranges, 2, sizes));
  info.approximate_bytes = sizes[0] + sizes[1];
  return info;
}

std::vector<DocumentInfo> Store::List(std::string_view prefix, std::string_view after,
                                      size_t limit) {
  impl_->CheckLatch();
  const std::string start = format::MetaKey(prefix);
  const std::string upper = Successor(start);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions options;
  options.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(options));
  std::vector<std::string> names;
  for (it->Seek(std::max(start, format::MetaKey(after))); it->Valid() && names.size() < limit;
       it->Next()) {
    std::string_view name = format::NameOfMetaKey(it->key().ToStringView());
    if (!after.empty() && name == after) continue;
    names.emplace_back(name);
  }
  impl_->Check(it->status());
  std::vector<DocumentInfo> infos;
  for (const std::string& name : names) {
    if (auto info = Info(name)) infos.push_back(std::move(*info));
  }
  return infos;
}

Result<void> Store::Remove(std::string_view name) {
  impl_->Sync();
  std::optional<std::string> meta_value = impl_->Get(format::MetaKey(name));
  if (!meta_value) return NoDocument(name);
  impl_->Unload(name);
  rocksdb::WriteBatch batch;
  batch.Delete(format::MetaKey(name));
  // A damaged meta record names no number: only the name can go.
  if (std::optional<format::Meta> meta = format::DecodeMeta(*meta_value)) {
    const uint64_t number = meta->number;
    batch.Delete(format::HeadKey(number));
    batch.DeleteRange(format::LogKey(number, 0), format::LogKey(number + 1, 0));
    batch.DeleteRange(format::SnapshotKey(number, 0), format::SnapshotKey(number + 1, 0));
  }
  impl_->Write(batch);
  return {};
}

Result<void> Store::Rename(std::string_view from, std::string_view to) {
  if (auto checked = format::CheckName(to); !checked) return checked.error();
  impl_->Sync();
  std::optional<std::string> meta_value = impl_->Get(format::MetaKey(from));
  if (!meta_value) return NoDocument(from);
  if (from == to) return {};
  if (impl_->Get(format::MetaKey(to))) {
    return Refusal{Reason::kInvalidName, Named(to, "the name is taken")};
  }
  rocksdb::WriteBatch batch;
  batch.Delete(format::MetaKey(from));
  batch.Put(format::MetaKey(to), *meta_value);
  impl_->Write(batch);
  if (auto it = impl_->loaded.find(from); it != impl_->loaded.end()) {
    std::unique_ptr<Loaded> open = std::move(it->second);
    impl_->loaded.erase(it);
    open->name = std::string(to);
    impl_->loaded.emplace(open->name, std::move(open));
  }
  return {};
}

}  // namespace aweft::storage
