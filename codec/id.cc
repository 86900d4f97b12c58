#include "codec/id.h"

#include <cstdint>

namespace aweft::codec {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr size_t kIdTextSize = 16;  // 96 bits in 6-bit characters, no padding.

// The 6-bit value of a base64url character, or -1.
int Sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

// The 4-bit value of a hex digit in either case, or -1.
int Nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string IdText(const Id& id) {
  std::string out;
  out.reserve(kIdTextSize);
  // Twelve bytes are four groups of three, and each group is four characters.
  for (size_t i = 0; i < kIdSize; i += 3) {
    const uint32_t group =
        uint32_t{id.bytes[i]} << 16 | uint32_t{id.bytes[i + 1]} << 8 | id.bytes[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6) {
      out.push_back(kAlphabet[(group >> shift) & 63]);
    }
  }
  return out;
}

Result<Id> IdFromText(std::string_view text) {
  if (text.size() != kIdTextSize) {
    return Refusal{Reason::kInvalidId,
                   "an id is 16 characters, not " + std::to_string(text.size())};
  }
  Id id;
  for (size_t i = 0, j = 0; i < kIdTextSize; i += 4, j += 3) {
    uint32_t group = 0;
    for (size_t k = i; k < i + 4; ++k) {
      const int sextet = Sextet(text[k]);
      if (sextet < 0) {
        return Refusal{Reason::kInvalidId, "character " + std::to_string(k) + " is not base64url"};
      }
      group = group << 6 | static_cast<uint32_t>(sextet);
    }
    id.bytes[j] = static_cast<uint8_t>(group >> 16);
    id.bytes[j + 1] = static_cast<uint8_t>(group >> 8);
    id.bytes[j + 2] = static_cast<uint8_t>(group);
  }
  return id;
}

Result<Id> IdFromBytes(std::string_view bytes) {
  if (bytes.size() != kIdSize) {
    return Refusal{Reason::kInvalidId, "an id is 12 bytes, not " + std::to_string(bytes.size())};
  }
  Id id;
  for (size_t i = 0; i < kIdSize; ++i) {
    id.bytes[i] = static_cast<uint8_t>(bytes[i]);
  }
  return id;
}

std::string Hex(std::string_view bytes) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto byte = static_cast<uint8_t>(c);
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 15]);
  }
  return out;
}

Result<std::string> FromHex(std::string_view hex) {
  if (hex.size() % 2 != 0) {
    return Refusal{Reason::kInvalidHex, std::to_string(hex.size()) + " hex digits is an odd count"};
  }
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int high = Nibble(hex[i]);
    const int low = Nibble(hex[i + 1]);
    if (high < 0 || low < 0) {
      return Refusal{Reason::kInvalidHex, "characters " + std::to_string(i) + " and " +
                                              std::to_string(i + 1) + " are not both hex digits"};
    }
    out.push_back(static_cast<char>(high << 4 | low));
  }
  return out;
}

}  // namespace aweft::codec
