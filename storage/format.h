#pragma once

// The store's on-disk keys and values (docs/storage.md describes them in
// prose). Internal to storage/: nothing here is part of the public API, but
// tests include it to damage a store on purpose.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "codec/result.h"
#include "codec/value.h"

namespace aweft::storage::format {

// The format this code reads and writes. A data directory of any other
// version is refused before anything else is read or written.
inline constexpr uint32_t kVersion = 1;

// Each key starts with one tag byte saying what it holds.
inline constexpr char kVersionTag = 'V';     // "V" -> version
inline constexpr char kNextNumberTag = 'N';  // "N" -> next document number
inline constexpr char kMetaTag = 'M';        // 'M' name -> Meta
inline constexpr char kHeadTag = 'H';        // 'H' number -> Head
inline constexpr char kLogTag = 'L';         // 'L' number seq -> commit
inline constexpr char kSnapshotTag = 'S';    // 'S' number seq -> snapshot

// Fixed-width big-endian integers, so that keys sort by number and seq.
void PutFixed64(std::string& out, uint64_t value);
void PutFixed32(std::string& out, uint32_t value);
uint64_t GetFixed64(std::string_view in);  // REQUIRES: in.size() >= 8
uint32_t GetFixed32(std::string_view in);  // REQUIRES: in.size() >= 4

std::string VersionKey();
std::string NextNumberKey();
std::string MetaKey(std::string_view name);
std::string HeadKey(uint64_t number);
std::string LogKey(uint64_t number, uint64_t seq);
std::string SnapshotKey(uint64_t number, uint64_t seq);

// The name in a meta key. REQUIRES: key starts with kMetaTag.
std::string_view NameOfMetaKey(std::string_view key);
// The seq in a log or snapshot key; nullopt if `key` is not one of
// `number`'s keys with `tag`.
std::optional<uint64_t> SeqOfKey(std::string_view key, char tag, uint64_t number);

// What never changes about a document (rename rewrites only the key).
struct Meta {
  uint64_t number = 0;  // Internal number, never reused.
  codec::Id root;       // The root's id, kept across reopen.
  codec::Kind kind = codec::Kind::kObject;
  uint64_t created_ms = 0;  // Unix time of creation, in milliseconds.
};
std::string EncodeMeta(const Meta& meta);
std::optional<Meta> DecodeMeta(std::string_view value);

// Where a document's log stands; rewritten in the batch of every commit.
// Invariant: floor <= snapshot <= head, or snapshot == 0 and floor == 0.
struct Head {
  uint64_t head = 0;      // The newest seq; 0 before the first commit.
  uint64_t snapshot = 0;  // The newest snapshot's seq; 0 if none.
  uint64_t floor = 0;     // Every seq <= floor has left the log.
};
std::string EncodeHead(const Head& head);
std::optional<Head> DecodeHead(std::string_view value);

// Refuses with invalid-name a name that is empty, longer than 256 bytes, not
// well-formed UTF-8, or holds a control character.
codec::Result<void> CheckName(std::string_view name);

}  // namespace aweft::storage::format
