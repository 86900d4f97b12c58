#include "storage/snapshot_codec.h"

#include <zstd.h>

#include <cstring>

#include "codec/commit.h"
#include "codec/id.h"
#include "storage/store.h"
#include "sync/snapshot.h"

namespace aweft::storage {

using codec::Reason;
using codec::Refusal;
using codec::Result;

namespace {

constexpr size_t kHeaderSize = 1 + codec::kIdSize + 8;
// A snapshot larger than this is taken for damage, not allocated.
constexpr unsigned long long kMaxRawBytes = 1ull << 32;

std::string Compress(std::string_view raw, int level) {
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> context(ZSTD_createCCtx(), ZSTD_freeCCtx);
  if (!context) throw Failure("zstd: cannot allocate a compression context");
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_compressionLevel, level);
  // The frame carries its content size and a checksum of the content.
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_contentSizeFlag, 1);
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  const size_t n = ZSTD_compress2(context.get(), out.data(), out.size(), raw.data(), raw.size());
  if (ZSTD_isError(n)) throw Failure(std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

Result<std::string> Decompress(std::string_view frame) {
  const unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > kMaxRawBytes) {
    return Refusal{Reason::kCorrupt, "its zstd frame header is damaged"};
  }
  std::string raw(size, '\0');
  const size_t n = ZSTD_decompress(raw.data(), raw.size(), frame.data(), frame.size());
  if (ZSTD_isError(n) || n != size) {
    return Refusal{Reason::kCorrupt,
                   std::string("it does not decompress: ") +
                       (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short content")};
  }
  return raw;
}

// The snapshot a commit of adds describes. An observable with no slots has
// no delta of its own: it appears only as the target of its attach edge.
sync::Snapshot FromAdds(const codec::Commit& commit, const format::Meta& meta) {
  sync::Snapshot snapshot{meta.root, meta.kind, {}};
  snapshot.observables[meta.root].kind = meta.kind;
  for (const codec::Delta& delta : commit.deltas) {
    sync::SnapshotObservable& node = snapshot.observables[delta.id];
    node.kind = delta.ref.kind;
    if (!delta.value) continue;
    if (const auto* ref = std::get_if<codec::Reference>(&*delta.value);
        ref && ref->edge == codec::Edge::kAttach) {
      auto [target, inserted] = snapshot.observables.try_emplace(ref->id);
      if (inserted) target->second.kind = ref->kind;  // Else the check compares.
    }
    node.slots.insert_or_assign(delta.ref.key, *delta.value);
  }
  return snapshot;
}

}  // namespace

EncodedSnapshot EncodeSnapshot(const sync::Document& document, uint64_t seq, int level) {
  std::string raw;
  if (std::optional<codec::Commit> commit = sync::AsCommit(document)) {
    if (auto encoded = codec::EncodeCommit(*commit, raw); !encoded) {
      throw Failure("cannot encode a snapshot: " + encoded.error().ToString());
    }
  }
  EncodedSnapshot out;
  out.raw_bytes = raw.size();
  out.value.push_back(static_cast<char>(document.root().kind()));
  out.value.append(document.root().id().view());
  format::PutFixed64(out.value, seq);
  out.value.append(Compress(raw, level));
  return out;
}

Result<std::unique_ptr<sync::Document>> DecodeSnapshot(std::string_view value,
                                                       const format::Meta& meta, uint64_t seq) {
  if (value.size() < kHeaderSize) return Refusal{Reason::kCorrupt, "it is cut short"};
  if (static_cast<uint8_t>(value[0]) != static_cast<uint8_t>(meta.kind) ||
      std::memcmp(value.data() + 1, meta.root.bytes.data(), codec::kIdSize) != 0 ||
      format::GetFixed64(value.substr(1 + codec::kIdSize)) != seq) {
    return Refusal{Reason::kCorrupt, "its header names another root, kind or seq"};
  }
  Result<std::string> raw = Decompress(value.substr(kHeaderSize));
  if (!raw) return raw.error();
  if (raw->empty()) return std::make_unique<sync::Document>(meta.root, meta.kind);
  Result<codec::Commit> commit = codec::DecodeCommit(*raw);
  if (!commit) return Refusal{Reason::kCorrupt, "it does not decode: " + commit.error().ToString()};
  auto document = sync::FromSnapshot(FromAdds(*commit, meta));
  if (!document) {
    return Refusal{Reason::kCorrupt, "it is not a valid document: " + document.error().ToString()};
  }
  return document;
}

}  // namespace aweft::storage
