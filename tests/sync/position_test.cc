#include "sync/position.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "codec/value.h"

namespace aweft::sync {
namespace {

std::string Between(std::optional<std::string> lo, std::optional<std::string> hi) {
  auto key = PositionBetween(lo, hi);
  REQUIRE(key);
  if (lo) REQUIRE(*lo < *key);
  if (hi) REQUIRE(*key < *hi);
  REQUIRE(codec::ValidPosition(*key));
  return *key;
}

// The reference layout (behaviour.md §1.11): count byte n, n digits stored as
// digit+1 with no leading zero, 3 random bytes, then 4-byte fraction levels
// whose digit byte is 1..254.
bool ReferenceLayout(const std::string& key) {
  const size_t n = static_cast<uint8_t>(key[0]);
  if (key.size() < 1 + n + 3 || (key.size() - 1 - n - 3) % 4 != 0) return false;
  for (size_t i = 1; i <= n; ++i) {
    const unsigned byte = static_cast<uint8_t>(key[i]);
    if (byte == 0 || byte == 255 || (i == 1 && byte == 1)) return false;
  }
  for (size_t i = 1 + n + 3; i < key.size(); i += 4) {
    const unsigned digit = static_cast<uint8_t>(key[i]);
    if (digit == 0 || digit == 255) return false;
  }
  return true;
}

TEST_CASE("the first position is integer 128 in the reference layout", "[sync][position]") {
  const std::string key = Between(std::nullopt, std::nullopt);
  CHECK(key.size() == 5);
  CHECK(static_cast<uint8_t>(key[0]) == 1);
  CHECK(static_cast<uint8_t>(key[1]) == 129);
}

TEST_CASE("10,000 appends stay six bytes long", "[sync][position]") {
  std::string last = Between(std::nullopt, std::nullopt);
  size_t longest = 0;
  for (int i = 0; i < 10000; ++i) {
    last = Between(last, std::nullopt);
    longest = std::max(longest, last.size());
    REQUIRE(ReferenceLayout(last));
  }
  CHECK(longest == 6);
}

TEST_CASE("prepends go below integer zero and stay ordered", "[sync][position]") {
  std::string first = Between(std::nullopt, std::nullopt);
  for (int i = 0; i < 400; ++i) {
    first = Between(std::nullopt, first);
    REQUIRE(ReferenceLayout(first));
  }
}

TEST_CASE("1,000 replicas inserting between the same two positions differ by their random bytes",
          "[sync][position]") {
  const std::string lo = Between(std::nullopt, std::nullopt);
  const std::string hi = Between(lo, std::nullopt);
  std::set<std::string> keys;
  std::set<std::string> digits;  // Everything but the three random bytes.
  for (int i = 0; i < 1000; ++i) {
    const std::string key = Between(lo, hi);
    keys.insert(key);
    digits.insert(key.substr(0, key.size() - 3));
  }
  // All pick the same digit; only the random bytes set them apart. Any two
  // collide 1 in 16.7 M (behaviour.md §1.11), so 1,000 keys hold a colliding
  // pair about 3% of the time, and three pairs about 5 in a million.
  CHECK(digits.size() == 1);
  CHECK(keys.size() >= 998);
  CHECK(lo < *keys.begin());
  CHECK(*keys.rbegin() < hi);
}

TEST_CASE("the reference's rules insert after and between every position made here",
          "[sync][position]") {
  // Positions made by appends, prepends and repeated inserts at one spot.
  std::vector<std::string> keys{Between(std::nullopt, std::nullopt)};
  for (int i = 0; i < 300; ++i) keys.push_back(Between(keys.back(), std::nullopt));
  for (int i = 0; i < 300; ++i) keys.insert(keys.begin(), Between(std::nullopt, keys.front()));
  std::string hi = keys[10];
  for (int i = 0; i < 200; ++i) {
    hi = Between(keys[9], hi);
    keys.push_back(hi);
  }
  std::sort(keys.begin(), keys.end());
  for (size_t i = 0; i < keys.size(); ++i) {
    REQUIRE(ReferenceLayout(keys[i]));
    const std::string after = Between(keys[i], std::nullopt);
    CHECK(ReferenceLayout(after));
    if (i + 1 < keys.size()) CHECK(ReferenceLayout(Between(keys[i], keys[i + 1])));
  }
}

TEST_CASE("positions of another layout still get one between them", "[sync][position]") {
  // The fixtures' hand-written positions.
  CHECK(codec::ValidPosition(Between(std::string("\x20"), std::string("\x30"))));
  CHECK(codec::ValidPosition(Between(std::string("\x20"), std::string("\x20\x01"))));
  CHECK(codec::ValidPosition(Between(std::string("\xff\xff"), std::nullopt)));
  CHECK(codec::ValidPosition(Between(std::nullopt, std::string("\x01"))));
}

TEST_CASE("positions refuse unordered or invalid bounds", "[sync][position][refusal]") {
  auto same = PositionBetween(std::string_view("\x20"), std::string_view("\x20"));
  REQUIRE_FALSE(same);
  CHECK(codec::Name(same.error().reason) == "invalid-position");
  auto bad = PositionBetween(std::string_view("\x20\x00", 2), std::nullopt);
  REQUIRE_FALSE(bad);
  CHECK(codec::Name(bad.error().reason) == "invalid-position");
}

}  // namespace
}  // namespace aweft::sync
