#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "codec/result.h"

// The byte layer shared by commits and frames: the canonical CBOR subset of
// format spec §6.1-6.3 (majors 0-4 and 7, shortest heads, float64 only,
// nesting at most eight arrays deep). See codec/FORMAT.md.
namespace aweft::codec {

inline constexpr int kMaxNesting = 8;
inline constexpr uint64_t kMaxSafeInteger = uint64_t{1} << 53;

// Checks that `bytes` hold exactly one well-formed item, refusing with the
// byte-layer reason of spec §7 (malformed-head, truncated, trailing-bytes,
// nesting-too-deep, ...). Allocates nothing and does not recurse.
Result<void> Scan(std::string_view bytes);

// Walks bytes that Scan() accepted. Every Read*/Peek* call returns nullopt
// or false when the next item is not of the asked type, and then consumes
// nothing. REQUIRES: the bytes passed Scan().
class Reader {
 public:
  enum class Type { kUint, kNegative, kBytes, kText, kArray, kFalse, kTrue, kNull, kFloat };

  explicit Reader(std::string_view bytes) : in_(bytes) {}

  bool done() const { return in_.empty(); }
  Type Peek() const;

  // Reads a whole number item (integer) as a double-safe int64.
  bool ReadInt(int64_t& out);
  // Reads an unsigned integer item.
  bool ReadUint(uint64_t& out);
  // Reads any number item, integer or float64.
  bool ReadNumber(double& out);
  bool ReadText(std::string_view& out);
  bool ReadBytes(std::string_view& out);
  bool ReadBool(bool& out);
  bool ReadNull();
  // Reads an array head; its `count` items follow.
  bool ReadArray(uint64_t& count);
  // Skips one whole item, arrays included.
  void Skip();
  // The bytes of the next whole item, without consuming it.
  std::string_view NextItem() const;

 private:
  uint64_t Argument(size_t& length) const;

  std::string_view in_;
};

// Appends canonical items to a string: shortest heads, whole numbers within
// ±2^53 as integers, negative zero as zero.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  void Uint(uint64_t value) { Head(0, value); }
  // Writes a finite number. REQUIRES: std::isfinite(value).
  void Number(double value);
  void Text(std::string_view text);
  void Bytes(std::string_view bytes);
  void Array(uint64_t count) { Head(4, count); }
  void Bool(bool value) { out_.push_back(value ? '\xf5' : '\xf4'); }
  void Null() { out_.push_back('\xf6'); }
  void Head(uint8_t major, uint64_t argument);

 private:
  std::string& out_;
};

// Checks `text` as UTF-8 the way the encoder must: an encoded surrogate is
// lone-surrogate, anything else not well formed is invalid-utf8.
Result<void> CheckText(std::string_view text);

}  // namespace aweft::codec
