// A seeded sweep: random bytes and mutated fixtures either refuse with a
// reason or decode to something that re-encodes to the very same bytes.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "codec/commit.h"
#include "codec/frame.h"
#include "codec/id.h"
#include "fixture.h"

namespace aweft::codec {
namespace {

constexpr uint32_t kSeed = 20260913;

struct Tally {
  int accepted = 0;
  int refused = 0;
};

// The property for one input, for both decoders.
void Check(const std::string& bytes, Tally& commits, Tally& frames) {
  INFO(Hex(bytes));
  auto commit = DecodeCommit(bytes);
  auto valid = ValidateCommit(bytes);
  REQUIRE(commit.has_value() == valid.has_value());
  if (commit) {
    ++commits.accepted;
    auto again = EncodeCommit(*commit);
    REQUIRE(again.has_value());
    REQUIRE(Hex(*again) == Hex(bytes));
  } else {
    ++commits.refused;
    REQUIRE(commit.error().reason == valid.error().reason);
    REQUIRE_FALSE(Name(commit.error().reason).empty());
    REQUIRE_FALSE(commit.error().message.empty());
  }
  auto frame = DecodeFrame(bytes);
  if (frame) {
    ++frames.accepted;
    auto again = EncodeFrame(*frame);
    REQUIRE(again.has_value());
    REQUIRE(Hex(*again) == Hex(bytes));
  } else {
    ++frames.refused;
    REQUIRE_FALSE(Name(frame.error().reason).empty());
    REQUIRE_FALSE(frame.error().message.empty());
  }
}

// Every valid fixture's bytes: each commit, and each frame.
std::vector<std::string> Seeds() {
  std::vector<std::string> seeds;
  for (const std::string& path : testing::FixtureFiles("fixtures")) {
    const boost::json::value fixture = testing::ReadJson(path);
    for (const boost::json::value& entry : fixture.at("commits").as_array()) {
      seeds.push_back(testing::Unhex(entry.at("bytes").as_string()));
    }
  }
  for (const std::string& path : testing::FixtureFiles("frames")) {
    if (testing::BaseName(path).starts_with("invalid-")) continue;
    const boost::json::value fixture = testing::ReadJson(path);
    seeds.push_back(testing::Unhex(fixture.at("bytes").as_string()));
  }
  return seeds;
}

// One single-byte mutation of `bytes`: flip, insert, delete or truncate.
std::string Mutate(std::string bytes, std::mt19937& random) {
  const size_t at = bytes.empty() ? 0 : random() % bytes.size();
  switch (random() % 4) {
    case 0:
      if (!bytes.empty()) bytes[at] = static_cast<char>(bytes[at] ^ (1 << random() % 8));
      break;
    case 1:
      bytes.insert(bytes.begin() + at, static_cast<char>(random()));
      break;
    case 2:
      if (!bytes.empty()) bytes.erase(at, 1);
      break;
    default:
      bytes.resize(at);
      break;
  }
  return bytes;
}

TEST_CASE("Random bytes refuse with a reason or re-encode identically", "[codec][random]") {
  std::mt19937 random(kSeed);
  Tally commits;
  Tally frames;
  for (int i = 0; i < 5000; ++i) {
    std::string bytes(random() % 65, '\0');
    // Half the inputs start like an array, so they get past the first check.
    for (char& byte : bytes) byte = static_cast<char>(random());
    if (!bytes.empty() && i % 2 == 0) bytes[0] = static_cast<char>(0x80 | random() % 6);
    Check(bytes, commits, frames);
  }
  CHECK(commits.refused > 0);
  CHECK(frames.refused > 0);
}

TEST_CASE("Mutated fixtures refuse with a reason or re-encode identically", "[codec][random]") {
  std::mt19937 random(kSeed);
  Tally commits;
  Tally frames;
  for (const std::string& seed : Seeds()) {
    for (int i = 0; i < 200; ++i) Check(Mutate(seed, random), commits, frames);
  }
  // Some mutations land on valid input (a flipped value bit, say), and most
  // do not: both paths get exercised.
  CHECK(commits.accepted > 0);
  CHECK(commits.refused > 0);
  CHECK(frames.accepted > 0);
  CHECK(frames.refused > 0);
}

// A random commit the encoder can write.
Commit RandomCommit(std::mt19937& random) {
  static const std::vector<std::string> texts = {
      "", "a", "k", "\xef\xbb\xbf", "\xf0\x9f\x94\x91", "\xc3\xa9t\xc3\xa9", std::string(30, 'x')};
  Commit commit;
  const int count = 1 + random() % 6;
  for (int i = 0; i < count; ++i) {
    Delta delta;
    delta.type = static_cast<DeltaType>(random() % 3);
    delta.id.bytes[11] = random() % 3;
    delta.ref.kind = static_cast<Kind>(random() % 3);
    if (delta.ref.kind == Kind::kObject) {
      delta.ref.key = texts[random() % texts.size()];
    } else if (delta.ref.kind == Kind::kArray) {
      delta.ref.key = std::string(1 + random() % 3, static_cast<char>(1 + random() % 255));
    } else {
      delta.ref.key = std::string(12, static_cast<char>(random() % 2));
    }
    if (delta.type != DeltaType::kRemove) {
      switch (random() % 6) {
        case 0:
          delta.value = Value{};
          break;
        case 1:
          delta.value = random() % 2 == 0;
          break;
        case 2:
          delta.value =
              std::ldexp(static_cast<double>(random()) - 2e9, static_cast<int>(random() % 80) - 40);
          break;
        case 3:
          delta.value = texts[random() % texts.size()];
          break;
        case 4:
          delta.value = Bytes{std::string(random() % 4, '\xff')};
          break;
        default:
          delta.value =
              Reference{static_cast<Edge>(random() % 2), static_cast<Kind>(random() % 3), delta.id};
          break;
      }
    }
    commit.deltas.push_back(std::move(delta));
  }
  if (random() % 3 == 0) commit.tag = std::string(4 + random() % 29, 't');
  return commit;
}

TEST_CASE("Random commits encode, decode and encode again to the same bytes", "[codec][random]") {
  std::mt19937 random(kSeed);
  int encoded = 0;
  for (int i = 0; i < 3000; ++i) {
    const Commit commit = RandomCommit(random);
    auto bytes = EncodeCommit(commit);
    if (!bytes) {
      REQUIRE(bytes.error().reason == Reason::kDuplicateSlot);
      continue;
    }
    ++encoded;
    auto decoded = DecodeCommit(*bytes);
    REQUIRE(decoded.has_value());
    REQUIRE(decoded->deltas.size() == commit.deltas.size());
    REQUIRE(Hex(*EncodeCommit(*decoded)) == Hex(*bytes));
    REQUIRE(ValidateCommit(*bytes).has_value());
    for (size_t d = 1; d < decoded->deltas.size(); ++d) {
      REQUIRE(CompareSlots(decoded->deltas[d - 1], decoded->deltas[d]) < 0);
    }
  }
  CHECK(encoded > 1000);
}

}  // namespace
}  // namespace aweft::codec
