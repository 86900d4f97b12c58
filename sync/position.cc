#include "sync/position.h"

#include <cstdint>
#include <vector>

#include "codec/value.h"
#include "sync/random.h"

namespace aweft::sync {
namespace {

using codec::Reason;
using codec::Refusal;

constexpr int kMaxDigits = 7;  // 254^7 < 2^63.
constexpr unsigned kMiddle = 128;
constexpr unsigned kTopDigit = 254;

// A key in the reference layout: the integer level, then whole fraction
// levels of four bytes.
struct Layout {
  std::string_view integer;  // Count byte, digits, three random bytes.
  uint64_t value = 0;
  std::string_view fractions;
};

std::optional<Layout> Parse(std::string_view key) {
  if (key.empty()) return std::nullopt;
  const unsigned count = static_cast<uint8_t>(key[0]);
  if (count > kMaxDigits || key.size() < 1 + count + 3) return std::nullopt;
  Layout layout;
  for (unsigned i = 1; i <= count; ++i) {
    const unsigned byte = static_cast<uint8_t>(key[i]);
    if (byte == 0 || byte > kTopDigit || (i == 1 && byte == 1)) {
      return std::nullopt;  // Not a digit, or a leading zero.
    }
    layout.value = layout.value * kTopDigit + (byte - 1);
  }
  layout.integer = key.substr(0, 1 + count + 3);
  layout.fractions = key.substr(layout.integer.size());
  if (layout.fractions.size() % 4 != 0) return std::nullopt;
  for (size_t i = 0; i < layout.fractions.size(); i += 4) {
    const unsigned digit = static_cast<uint8_t>(layout.fractions[i]);
    if (digit == 0 || digit > kTopDigit) return std::nullopt;
  }
  return layout;
}

void AppendRandom(std::string& out) {
  uint8_t bytes[3];
  RandomBytes(bytes, 3);
  if (bytes[2] == 0) bytes[2] = 1;  // A position never ends in zero.
  out.append(reinterpret_cast<const char*>(bytes), 3);
}

void AppendInteger(std::string& out, uint64_t value) {
  char digits[kMaxDigits + 2];
  int n = 0;
  for (; value > 0; value /= kTopDigit) {
    digits[n++] = static_cast<char>(value % kTopDigit + 1);
  }
  out.push_back(static_cast<char>(n));
  for (int i = n - 1; i >= 0; --i) out.push_back(digits[i]);
  AppendRandom(out);
}

bool ZeroRandom(std::string_view level) {
  return level.substr(level.size() - 3) == std::string_view("\0\0\0", 3);
}

// Chooses the fraction levels below an already written prefix. `lower` is
// what is left of the lower key (empty once it ran out); `upper` is what is
// left of the upper key, or nullopt once the upper bound no longer binds.
std::string Fractions(std::string out, std::string_view lower,
                      std::optional<std::string_view> upper) {
  for (;;) {
    const bool has_lower = lower.size() >= 4;
    const bool has_upper = upper && upper->size() >= 4;
    const std::string_view l = has_lower ? lower.substr(0, 4) : "";
    const std::string_view u = has_upper ? upper->substr(0, 4) : "";
    if (has_lower && has_upper && l == u) {
      out.append(l);
      lower.remove_prefix(4);
      upper->remove_prefix(4);
      continue;
    }
    const unsigned ld = has_lower ? static_cast<uint8_t>(l[0]) : 0;
    const unsigned ud = has_upper ? static_cast<uint8_t>(u[0]) : 0;
    unsigned digit = 0;
    if (!has_lower && !has_upper) {
      digit = kMiddle;
    } else if (has_lower && !has_upper) {
      if (ld + 1 <= kTopDigit) digit = ld + 1;
    } else if (!has_lower && has_upper) {
      if (ud > 1) digit = ud - 1;
    } else if (ud >= ld + 2) {
      digit = ld + (ud - ld) / 2;
    }
    if (digit != 0) {
      out.push_back(static_cast<char>(digit));
      AppendRandom(out);
      return out;
    }
    if (has_lower) {  // Go just above the lower key.
      out.append(l);
      lower.remove_prefix(4);
      upper.reset();
    } else if (!ZeroRandom(u)) {  // Go just below the upper key's level.
      out.push_back(u[0]);
      out.append(3, '\0');
      upper.reset();
    } else {
      out.append(u);
      upper->remove_prefix(4);
    }
  }
}

std::string LayoutBetween(const Layout* a, const Layout* b) {
  if (a && b && a->integer == b->integer) {
    return Fractions(std::string(a->integer), a->fractions, b->fractions);
  }
  std::optional<uint64_t> pick;
  if (!a && !b) {
    pick = kMiddle;
  } else if (a && !b) {
    pick = a->value + 1;
  } else if (!a && b) {
    if (b->value > 0) pick = b->value - 1;
  } else if (b->value >= a->value + 2) {
    pick = a->value + (b->value - a->value) / 2;
  }
  if (pick) {
    std::string out;
    AppendInteger(out, *pick);
    return out;
  }
  if (a) return Fractions(std::string(a->integer), a->fractions, std::nullopt);
  // Below integer zero: copy it with zero randomness and go under it.
  if (!ZeroRandom(b->integer)) {
    std::string out(b->integer.substr(0, b->integer.size() - 3));
    out.append(3, '\0');
    return Fractions(std::move(out), "", std::nullopt);
  }
  return Fractions(std::string(b->integer), "", b->fractions);
}

// For bounds in another layout: the shortest byte step between them, then
// three random bytes so concurrent inserts still differ.
std::string GenericBetween(std::string_view a, std::optional<std::string_view> b) {
  std::string out;
  for (size_t i = 0;; ++i) {
    const unsigned da = i < a.size() ? static_cast<uint8_t>(a[i]) : 0;
    const unsigned db = b ? static_cast<uint8_t>((*b)[i]) : 256;
    if (db >= da + 2) {
      out.push_back(static_cast<char>(da + (db - da) / 2));
      break;
    }
    out.push_back(static_cast<char>(da));
    if (db != da) b.reset();  // Now above the lower key's prefix: no bound.
  }
  AppendRandom(out);
  return out;
}

}  // namespace

codec::Result<std::string> PositionBetween(std::optional<std::string_view> lower,
                                           std::optional<std::string_view> upper) {
  if ((lower && !codec::ValidPosition(*lower)) || (upper && !codec::ValidPosition(*upper))) {
    return Refusal{Reason::kInvalidPosition, "a bound is not a valid position"};
  }
  if (lower && upper && *lower >= *upper) {
    return Refusal{Reason::kInvalidPosition, "the lower bound is not below the upper bound"};
  }
  auto between = [&](std::string_view key) {
    return (!lower || *lower < key) && (!upper || key < *upper);
  };
  std::optional<Layout> a, b;
  if (lower) a = Parse(*lower);
  if (upper) b = Parse(*upper);
  if ((!lower || a) && (!upper || b)) {
    std::string key = LayoutBetween(a ? &*a : nullptr, b ? &*b : nullptr);
    if (between(key)) return key;
  }
  std::string key = GenericBetween(lower.value_or(""), upper);
  if (between(key) && codec::ValidPosition(key)) return key;
  return Refusal{Reason::kInvalidPosition, "no position fits between the bounds"};
}

}  // namespace aweft::sync
