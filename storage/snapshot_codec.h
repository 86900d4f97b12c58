#pragma once

// A snapshot's stored value: the whole document at one seq as one commit of
// adds (sync::AsCommit), in canonical bytes, compressed with zstd. Internal
// to storage/; docs/storage.md describes the layout.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "codec/result.h"
#include "storage/format.h"
#include "sync/document.h"

namespace aweft::storage {

struct EncodedSnapshot {
  std::string value;     // What is stored under the snapshot key.
  size_t raw_bytes = 0;  // The canonical commit's size before compression.
};

// Encodes `document` as the snapshot at `seq`, compressed at zstd `level`.
// Throws Failure if the document holds what the codec cannot encode (a bug).
EncodedSnapshot EncodeSnapshot(const sync::Document& document, uint64_t seq, int level);

// Rebuilds the document a snapshot holds, ids and positions kept. Refuses
// with corrupt a value that is cut short, fails its zstd checksum, does not
// decode, names another root, kind or seq than `meta` and `seq`, or is not
// a valid document.
codec::Result<std::unique_ptr<sync::Document>> DecodeSnapshot(std::string_view value,
                                                              const format::Meta& meta,
                                                              uint64_t seq);

}  // namespace aweft::storage
