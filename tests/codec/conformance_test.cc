// The conformance fixtures of spec/README.md §3-4 and §6, run against the
// codec: every valid one both ways, every invalid one for its exact reason.
#include <algorithm>
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "codec/cbor.h"
#include "codec/commit.h"
#include "codec/frame.h"
#include "codec/id.h"
#include "fixture.h"

namespace aweft::codec {
namespace {

namespace json = boost::json;
using testing::IdForm;

std::string ReasonOf(const Refusal& refusal) { return std::string(Name(refusal.reason)); }

TEST_CASE("The fixture corpus is complete", "[codec][conformance]") {
  CHECK(testing::FixtureFiles("fixtures").size() == 16);
  CHECK(testing::FixtureFiles("fixtures/invalid").size() == 38);
  CHECK(testing::FixtureFiles("frames").size() == 30);
  CHECK(testing::FixtureFiles("frames", "invalid-").size() == 20);
}

TEST_CASE(
    "A valid commit fixture decodes to its deltas and encodes to its "
    "bytes in any order",
    "[codec][conformance]") {
  const std::string path = GENERATE(from_range(testing::FixtureFiles("fixtures")));
  INFO(testing::BaseName(path));
  const json::value fixture = testing::ReadJson(path);
  std::mt19937 random(20260913);
  for (const json::value& entry : fixture.at("commits").as_array()) {
    const std::string bytes = testing::Unhex(entry.at("bytes").as_string());
    const Commit expected = testing::CommitFromJson(entry, IdForm::kText);
    INFO(Hex(bytes));

    auto decoded = DecodeCommit(bytes);
    REQUIRE(decoded.has_value());
    CHECK(*decoded == expected);
    CHECK(ValidateCommit(bytes).has_value());

    Commit reordered = expected;
    auto encoded = EncodeCommit(reordered);
    REQUIRE(encoded.has_value());
    CHECK(Hex(*encoded) == Hex(bytes));
    std::reverse(reordered.deltas.begin(), reordered.deltas.end());
    CHECK(Hex(*EncodeCommit(reordered)) == Hex(bytes));
    for (int shuffle = 0; shuffle < 8; ++shuffle) {
      std::shuffle(reordered.deltas.begin(), reordered.deltas.end(), random);
      CHECK(Hex(*EncodeCommit(reordered)) == Hex(bytes));
    }
  }
}

TEST_CASE("An invalid commit fixture is refused for its reason at its stage",
          "[codec][conformance]") {
  const std::string path = GENERATE(from_range(testing::FixtureFiles("fixtures/invalid")));
  INFO(testing::BaseName(path));
  const json::value fixture = testing::ReadJson(path);
  const std::string stage(fixture.at("stage").as_string());
  const std::string reason(fixture.at("reason").as_string());
  const std::string bytes = testing::Unhex(fixture.at("bytes").as_string());

  auto decoded = DecodeCommit(bytes);
  auto validated = ValidateCommit(bytes);
  if (stage == "decode") {
    REQUIRE_FALSE(decoded.has_value());
    CHECK(ReasonOf(decoded.error()) == reason);
    REQUIRE_FALSE(validated.has_value());
    CHECK(ReasonOf(validated.error()) == reason);
  } else {
    // The document model refuses these; the bytes themselves are well formed.
    REQUIRE(stage == "apply");
    REQUIRE(decoded.has_value());
    CHECK(validated.has_value());
    CHECK(Hex(*EncodeCommit(*decoded)) == Hex(bytes));
  }
}

TEST_CASE("A valid frame fixture's wire, frame and bytes agree", "[codec][conformance]") {
  std::vector<std::string> valid;
  for (const std::string& path : testing::FixtureFiles("frames")) {
    if (!testing::BaseName(path).starts_with("invalid-")) valid.push_back(path);
  }
  REQUIRE(valid.size() == 10);
  const std::string path = GENERATE_COPY(from_range(valid));
  INFO(testing::BaseName(path));
  const json::value fixture = testing::ReadJson(path);
  const std::string bytes = testing::Unhex(fixture.at("bytes").as_string());

  std::string wire;
  Writer writer(wire);
  testing::WriteWire(writer, fixture.at("wire"));
  CHECK(Hex(wire) == Hex(bytes));

  const Frame frame = testing::FrameFromJson(fixture.at("frame"));
  auto encoded = EncodeFrame(frame);
  REQUIRE(encoded.has_value());
  CHECK(Hex(*encoded) == Hex(bytes));

  auto decoded = DecodeFrame(bytes);
  REQUIRE(decoded.has_value());
  CHECK(*decoded == frame);
  CHECK(FrameKindName(*decoded) == fixture.at("frame").at("kind").as_string());
  CHECK(Hex(*EncodeFrame(*decoded)) == Hex(bytes));
}

TEST_CASE("An invalid frame fixture is refused for its reason", "[codec][conformance]") {
  const std::string path = GENERATE(from_range(testing::FixtureFiles("frames", "invalid-")));
  INFO(testing::BaseName(path));
  const json::value fixture = testing::ReadJson(path);
  const std::string bytes = testing::Unhex(fixture.at("bytes").as_string());
  auto decoded = DecodeFrame(bytes);
  REQUIRE_FALSE(decoded.has_value());
  CHECK(ReasonOf(decoded.error()) == fixture.at("reason").as_string());
}

}  // namespace
}  // namespace aweft::codec
