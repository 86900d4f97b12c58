#include "storage/format.h"

#include <cstring>

#include "codec/cbor.h"
#include "codec/id.h"

namespace aweft::storage::format {

using codec::Reason;
using codec::Refusal;
using codec::Result;

namespace {

constexpr size_t kMaxNameBytes = 256;
constexpr size_t kMetaSize = 8 + 1 + codec::kIdSize + 8;
constexpr size_t kHeadSize = 3 * 8;

std::string NumberKey(char tag, uint64_t number) {
  std::string key(1, tag);
  PutFixed64(key, number);
  return key;
}

// Decodes the UTF-8 code point at the front of `in` (already known to be
// well formed) and advances past it.
uint32_t NextCodePoint(std::string_view& in) {
  const auto lead = static_cast<uint8_t>(in[0]);
  const size_t length = lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
  uint32_t point = length == 1 ? lead : lead & (0x7f >> length);
  for (size_t i = 1; i < length; ++i) {
    point = point << 6 | (static_cast<uint8_t>(in[i]) & 0x3f);
  }
  in.remove_prefix(length);
  return point;
}

}  // namespace

void PutFixed64(std::string& out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>(value >> shift));
  }
}

void PutFixed32(std::string& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>(value >> shift));
  }
}

uint64_t GetFixed64(std::string_view in) {
  uint64_t value = 0;
  for (size_t i = 0; i < 8; ++i) value = value << 8 | static_cast<uint8_t>(in[i]);
  return value;
}

uint32_t GetFixed32(std::string_view in) {
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value = value << 8 | static_cast<uint8_t>(in[i]);
  return value;
}

std::string VersionKey() { return std::string(1, kVersionTag); }
std::string NextNumberKey() { return std::string(1, kNextNumberTag); }

std::string MetaKey(std::string_view name) {
  std::string key(1, kMetaTag);
  key.append(name);
  return key;
}

std::string HeadKey(uint64_t number) { return NumberKey(kHeadTag, number); }

std::string LogKey(uint64_t number, uint64_t seq) {
  std::string key = NumberKey(kLogTag, number);
  PutFixed64(key, seq);
  return key;
}

std::string SnapshotKey(uint64_t number, uint64_t seq) {
  std::string key = NumberKey(kSnapshotTag, number);
  PutFixed64(key, seq);
  return key;
}

std::string_view NameOfMetaKey(std::string_view key) { return key.substr(1); }

std::optional<uint64_t> SeqOfKey(std::string_view key, char tag, uint64_t number) {
  if (key.size() != 17 || key[0] != tag || GetFixed64(key.substr(1)) != number) {
    return std::nullopt;
  }
  return GetFixed64(key.substr(9));
}

std::string EncodeMeta(const Meta& meta) {
  std::string out;
  out.reserve(kMetaSize);
  PutFixed64(out, meta.number);
  out.push_back(static_cast<char>(meta.kind));
  out.append(meta.root.view());
  PutFixed64(out, meta.created_ms);
  return out;
}

std::optional<Meta> DecodeMeta(std::string_view value) {
  if (value.size() != kMetaSize) return std::nullopt;
  Meta meta;
  meta.number = GetFixed64(value);
  const auto kind = static_cast<uint8_t>(value[8]);
  if (kind > 2) return std::nullopt;
  meta.kind = static_cast<codec::Kind>(kind);
  std::memcpy(meta.root.bytes.data(), value.data() + 9, codec::kIdSize);
  meta.created_ms = GetFixed64(value.substr(9 + codec::kIdSize));
  return meta;
}

std::string EncodeHead(const Head& head) {
  std::string out;
  out.reserve(kHeadSize);
  PutFixed64(out, head.head);
  PutFixed64(out, head.snapshot);
  PutFixed64(out, head.floor);
  return out;
}

std::optional<Head> DecodeHead(std::string_view value) {
  if (value.size() != kHeadSize) return std::nullopt;
  Head head{GetFixed64(value), GetFixed64(value.substr(8)), GetFixed64(value.substr(16))};
  if (head.floor > head.snapshot || head.snapshot > head.head) return std::nullopt;
  return head;
}

Result<void> CheckName(std::string_view name) {
  if (name.empty()) return Refusal{Reason::kInvalidName, "a document name cannot be empty"};
  if (name.size() > kMaxNameBytes) {
    return Refusal{Reason::kInvalidName,
                   "a document name is at most 256 bytes, not " + std::to_string(name.size())};
  }
  if (!codec::CheckText(name)) {
    return Refusal{Reason::kInvalidName, "a document name must be well-formed UTF-8"};
  }
  for (std::string_view rest = name; !rest.empty();) {
    const uint32_t point = NextCodePoint(rest);
    if (point < 0x20 || (point >= 0x7f && point < 0xa0)) {
      return Refusal{Reason::kInvalidName,
                     "a document name cannot hold control character U+" +
                         codec::Hex(std::string(1, static_cast<char>(point)))};
    }
  }
  return {};
}

}  // namespace aweft::storage::format
