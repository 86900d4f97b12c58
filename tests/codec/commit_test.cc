// Commits: the decoder's structural checks and their order, the encoder's
// refusals, and ValidateCommit's promise to allocate nothing.
#include "codec/commit.h"

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "allocations.h"
#include "codec/cbor.h"
#include "codec/id.h"
#include "fixture.h"

namespace aweft::codec {
namespace {

using testing::Unhex;

const std::string kId1 = "4c000000000000000000000001";
const std::string kId2 = "4c000000000000000000000002";
const std::string kRefK = "8200616b";  // [object, "k"]

std::string Verdict(const std::string& hex) {
  auto decoded = DecodeCommit(Unhex(hex));
  auto validated = ValidateCommit(Unhex(hex));
  const std::string decode = decoded ? "ok" : std::string(Name(decoded.error().reason));
  const std::string validate = validated ? "ok" : std::string(Name(validated.error().reason));
  // The two share one walker, so they must always agree.
  CHECK(decode == validate);
  if (decoded) CHECK(Hex(*EncodeCommit(*decoded)) == hex);
  return decode;
}

// A one-delta commit: [[delta]].
std::string One(const std::string& delta) { return "8181" + delta; }

struct Case {
  std::string hex;
  const char* verdict;
};

TEST_CASE("DecodeCommit refuses a malformed commit shape", "[codec][commit]") {
  const std::string add = "8400" + kId1 + kRefK + "05";
  const Case c = GENERATE_COPY(values<Case>({
      {One(add), "ok"},
      {"616b", "invalid-commit"},
      {"00", "invalid-commit"},
      {"80", "invalid-commit"},
      {"8100", "invalid-commit"},
      {"83"
       "81" +
           add +
           "44aabbccdd"
           "00",
       "invalid-commit"},
      {"8180", "empty-commit"},
      {"828044aabbccdd", "empty-commit"},
      {"82"
       "81" +
           add + "616b",
       "invalid-tag"},
      {"82"
       "81" +
           add + "43aabbcc",
       "invalid-tag"},
      {"82"
       "81" +
           add + "5821" + std::string(66, 'a'),
       "invalid-tag"},
      {"82"
       "81" +
           add + "44aabbccdd",
       "ok"},
      {"82"
       "81" +
           add + "5820" + std::string(64, 'a'),
       "ok"},
  }));
  INFO(c.hex);
  CHECK(Verdict(c.hex) == c.verdict);
}

TEST_CASE("DecodeCommit refuses a malformed delta", "[codec][commit]") {
  const Case c = GENERATE_COPY(values<Case>({
      {One("05"), "invalid-delta"},
      {One("80"), "invalid-delta"},
      {One("8200" + kId1), "invalid-delta"},
      {One("8500" + kId1 + kRefK + "0505"), "invalid-delta"},
      {One("8403" + kId1 + kRefK + "05"), "unknown-delta-type"},
      {One("8420" + kId1 + kRefK + "05"), "unknown-delta-type"},
      {One("84fb3fe0000000000000" + kId1 + kRefK + "05"), "unknown-delta-type"},
      {One("846161" + kId1 + kRefK + "05"), "unknown-delta-type"},
      {One("84f6" + kId1 + kRefK + "05"), "unknown-delta-type"},
      {One("8400480000000000000001" + kRefK + "05"), "invalid-id"},
      {One("84004d00000000000000000000000001" + kRefK + "05"), "invalid-id"},
      {One("84006c414141414141414141414141" + kRefK + "05"), "invalid-id"},
      {One("8400f6" + kRefK + "05"), "invalid-id"},
      {One("8402" + kId1 + kRefK + "05"), "unexpected-value"},
      {One("8302" + kId1 + kRefK), "ok"},
      {One("8300" + kId1 + kRefK), "missing-value"},
      {One("8301" + kId1 + kRefK), "missing-value"},
  }));
  INFO(c.hex);
  CHECK(Verdict(c.hex) == c.verdict);
}

TEST_CASE("DecodeCommit refuses a malformed ref", "[codec][commit]") {
  auto with_ref = [](const std::string& ref) { return One("8400" + kId1 + ref + "05"); };
  const Case c = GENERATE_COPY(values<Case>({
      {with_ref("616b"), "invalid-ref"},
      {with_ref("8100"), "invalid-ref"},
      {with_ref("8300616b00"), "invalid-ref"},
      {with_ref("8203616b"), "unknown-ref-kind"},
      {with_ref("8220616b"), "unknown-ref-kind"},
      {with_ref("826161616b"), "unknown-ref-kind"},
      {with_ref("8200416b"), "invalid-ref"},
      {with_ref("8201616b"), "invalid-ref"},
      {with_ref("8202616b"), "invalid-ref"},
      {with_ref("820140"), "invalid-position"},
      {with_ref("82014100"), "invalid-position"},
      {with_ref("8201424000"), "invalid-position"},
      {with_ref("82014140"), "ok"},
      {with_ref("8201420040"), "ok"},
      {with_ref("82024b0000000000000000000001"), "invalid-id"},
      {with_ref("8202" + kId2), "ok"},
      {with_ref("820060"), "ok"},
  }));
  INFO(c.hex);
  CHECK(Verdict(c.hex) == c.verdict);
}

TEST_CASE("DecodeCommit refuses a malformed reference value", "[codec][commit]") {
  auto with_value = [](const std::string& value) { return One("8400" + kId1 + kRefK + value); };
  const Case c = GENERATE_COPY(values<Case>({
      {with_value("830000" + kId2), "ok"},
      {with_value("830102" + kId2), "ok"},
      {with_value("80"), "invalid-reference"},
      {with_value("820000"), "invalid-reference"},
      {with_value("84000000" + kId2), "invalid-reference"},
      {with_value("830200" + kId2), "unknown-edge-kind"},
      {with_value("83f600" + kId2), "unknown-edge-kind"},
      {with_value("830003" + kId2), "unknown-ref-kind"},
      {with_value("8300f6" + kId2), "unknown-ref-kind"},
      {with_value("830000616b"), "invalid-reference"},
      {with_value("830000f6"), "invalid-reference"},
      {with_value("8300004b0000000000000000000002"), "invalid-id"},
      {with_value("f6"), "ok"},
      {with_value("f4"), "ok"},
      {with_value("40"), "ok"},
      {with_value("60"), "ok"},
      {with_value("3b001fffffffffffff"), "ok"},
      {with_value("fbc340000000000001"), "ok"},
  }));
  INFO(c.hex);
  CHECK(Verdict(c.hex) == c.verdict);
}

TEST_CASE("DecodeCommit refuses deltas out of canonical order", "[codec][commit]") {
  auto add = [](const std::string& id, const std::string& ref) { return "8400" + id + ref + "05"; };
  auto two = [](const std::string& a, const std::string& b) { return "8182" + a + b; };
  const Case c = GENERATE_COPY(values<Case>({
      {two(add(kId1, kRefK), add(kId2, kRefK)), "ok"},
      {two(add(kId2, kRefK), add(kId1, kRefK)), "deltas-out-of-order"},
      {two(add(kId1, kRefK), add(kId1, kRefK)), "duplicate-slot"},
      {two(add(kId1, kRefK), "8302" + kId1 + kRefK), "duplicate-slot"},
      {two(add(kId1, "82006162"), add(kId1, "82006161")), "deltas-out-of-order"},
      {two(add(kId1, "8200616b"), add(kId1, "8200626161")), "ok"},
      {two(add(kId1, "8200626161"), add(kId1, "8200616b")), "deltas-out-of-order"},
      {two(add(kId1, "82014140"), add(kId1, kRefK)), "deltas-out-of-order"},
      {two(add(kId1, kRefK), add(kId1, "82014140")), "ok"},
  }));
  INFO(c.hex);
  CHECK(Verdict(c.hex) == c.verdict);
}

TEST_CASE("DecodeCommit checks in the reference order", "[codec][commit]") {
  const std::string first = "8400" + kId2 + kRefK + "05";
  const std::string second = "8400" + kId1 + kRefK + "05";  // Out of order.
  // Every delta is read before the order is judged.
  CHECK(Verdict("8182" + first + "8403" + kId1 + kRefK + "05") == "unknown-delta-type");
  CHECK(Verdict("8183" + first + second + "05") == "invalid-delta");
  // The order is judged before the tag.
  CHECK(Verdict("8282" + first + second + "41aa") == "deltas-out-of-order");
  // The byte layer is judged first of all, wherever its defect lies.
  CHECK(Verdict("8282" + first + second + "1817") == "non-canonical-integer");
  CHECK(Verdict("8280" + std::string("1c")) == "malformed-head");
  CHECK(Verdict("8280" + std::string("7f")) == "indefinite-length");
  // Within a delta: type, id, ref, then whether a value belongs.
  CHECK(Verdict(One("8303480000000000000001" + kRefK)) == "unknown-delta-type");
  CHECK(Verdict(One("8302480000000000000001" + std::string("616b"))) == "invalid-id");
  CHECK(Verdict(One("8402" + kId1 +
                    "8201"
                    "40"
                    "05")) == "invalid-position");
  CHECK(Verdict(One("8300" + kId1 + "8203616b")) == "unknown-ref-kind");
  CHECK(Verdict(One("8400" + kId1 + kRefK + "83020380")) == "unknown-edge-kind");
}

Id MakeId(uint8_t n) {
  Id id;
  id.bytes[11] = n;
  return id;
}

Delta Add(uint8_t id, std::string key, Value value) {
  return Delta{DeltaType::kAdd, MakeId(id), Ref{Kind::kObject, std::move(key)}, std::move(value)};
}

std::string EncodeReason(const Commit& commit) {
  auto encoded = EncodeCommit(commit);
  return encoded ? "ok" : std::string(Name(encoded.error().reason));
}

TEST_CASE("EncodeCommit refuses what has no encoding", "[codec][commit]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Delta remove{DeltaType::kRemove, MakeId(1), Ref{Kind::kObject, "k"}, {}};
  Delta in_array{DeltaType::kAdd, MakeId(1), Ref{Kind::kArray, "\x40"}, 1.0};
  Delta in_map{DeltaType::kAdd, MakeId(1), Ref{Kind::kMap, std::string(MakeId(9).view())}, 1.0};
  CHECK(EncodeReason(Commit{}) == "empty-commit");
  CHECK(EncodeReason({{Add(1, "k", 1.0)}, {}}) == "ok");
  CHECK(EncodeReason({{Add(1, "k", 1.0), Add(1, "k", 2.0)}, {}}) == "duplicate-slot");
  CHECK(EncodeReason({{Add(1, "k", 1.0), remove}, {}}) == "duplicate-slot");
  CHECK(EncodeReason({{remove}, {}}) == "ok");
  CHECK(EncodeReason({{in_array}, {}}) == "ok");
  CHECK(EncodeReason({{in_map}, {}}) == "ok");
  remove.value = Value{};
  CHECK(EncodeReason({{remove}, {}}) == "unexpected-value");
  Delta add = Add(1, "k", 1.0);
  add.value.reset();
  CHECK(EncodeReason({{add}, {}}) == "missing-value");
  add.type = DeltaType::kReplace;
  CHECK(EncodeReason({{add}, {}}) == "missing-value");
  in_array.ref.key = "";
  CHECK(EncodeReason({{in_array}, {}}) == "invalid-position");
  in_array.ref.key = std::string("\x40\x00", 2);
  CHECK(EncodeReason({{in_array}, {}}) == "invalid-position");
  in_map.ref.key = std::string(11, '\x01');
  CHECK(EncodeReason({{in_map}, {}}) == "invalid-id");
  in_map.ref.key = std::string(13, '\x01');
  CHECK(EncodeReason({{in_map}, {}}) == "invalid-id");
  CHECK(EncodeReason({{Add(1, "k", nan)}, {}}) == "non-finite-float");
  CHECK(EncodeReason({{Add(1, "k", inf)}, {}}) == "non-finite-float");
  CHECK(EncodeReason({{Add(1, "k", -inf)}, {}}) == "non-finite-float");
  CHECK(EncodeReason({{Add(1, "k", "a\xed\xa0\x80")}, {}}) == "lone-surrogate");
  CHECK(EncodeReason({{Add(1, "\xed\xbf\xbf", 1.0)}, {}}) == "lone-surrogate");
  CHECK(EncodeReason({{Add(1, "k", "\xc3\x28")}, {}}) == "invalid-utf8");
  CHECK(EncodeReason({{Add(1, "\xff", 1.0)}, {}}) == "invalid-utf8");
}

TEST_CASE("EncodeCommit takes a tag of 4 to 32 bytes", "[codec][commit]") {
  const Delta add = Add(1, "k", 1.0);
  CHECK(EncodeReason({{add}, std::string(3, 't')}) == "invalid-tag");
  CHECK(EncodeReason({{add}, std::string(4, 't')}) == "ok");
  CHECK(EncodeReason({{add}, std::string(32, 't')}) == "ok");
  CHECK(EncodeReason({{add}, std::string(33, 't')}) == "invalid-tag");
  CHECK(EncodeReason({{add}, std::string()}) == "invalid-tag");
}

TEST_CASE("EncodeCommit sorts a copy and leaves its input alone", "[codec][commit]") {
  const Commit given{{Add(3, "b", 1.0), Add(1, "zz", 2.0), Add(1, "z", 3.0), Add(2, "a", true)},
                     {}};
  const Commit copy = given;
  auto bytes = EncodeCommit(given);
  REQUIRE(bytes.has_value());
  CHECK(given == copy);
  auto decoded = DecodeCommit(*bytes);
  REQUIRE(decoded.has_value());
  REQUIRE(decoded->deltas.size() == 4);
  CHECK(decoded->deltas[0] == given.deltas[2]);
  CHECK(decoded->deltas[1] == given.deltas[1]);
  CHECK(decoded->deltas[2] == given.deltas[3]);
  CHECK(decoded->deltas[3] == given.deltas[0]);
}

TEST_CASE("EncodeCommit appends, and leaves the output alone on refusal", "[codec][commit]") {
  std::string out = "prefix";
  REQUIRE(EncodeCommit(Commit{{Add(1, "k", 1.0)}, {}}, out).has_value());
  CHECK(out.starts_with("prefix\x81\x81"));
  const std::string before = out;
  // The second delta sorts last and fails only after the first is written.
  const Commit bad{{Add(1, "a", 1.0), Add(2, "b", "\xed\xa0\x80")}, {}};
  auto refused = EncodeCommit(bad, out);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().reason == Reason::kLoneSurrogate);
  CHECK(out == before);
}

TEST_CASE("Values keep what they are through a round trip", "[codec][commit]") {
  const Commit commit{{Add(1, "bom",
                           "\xef\xbb\xbf"
                           "kept"),
                       Add(1, "bytes", Bytes{std::string("\x00\xff", 2)}), Add(1, "empty", Bytes{}),
                       Add(1, "text", std::string()), Add(1, "zero", -0.0), Add(1, "null", Value{}),
                       Add(1, "ref", Reference{Edge::kAlias, Kind::kMap, MakeId(7)}),
                       Add(1, "\xf0\x9f\x94\x91", false)},
                      std::string("tagg")};
  auto bytes = EncodeCommit(commit);
  REQUIRE(bytes.has_value());
  auto decoded = DecodeCommit(*bytes);
  REQUIRE(decoded.has_value());
  for (const Delta& delta : commit.deltas) {
    INFO(delta.ref.key);
    bool found = false;
    for (const Delta& back : decoded->deltas) {
      if (back.ref == delta.ref) {
        found = true;
        CHECK(back == delta);  // -0.0 == 0.0, and decodes as +0.
      }
    }
    CHECK(found);
  }
  CHECK(decoded->tag == commit.tag);
  CHECK(Hex(*bytes).find("647a65726f"
                         "00") != std::string::npos);
}

TEST_CASE("ValidateCommit and Scan allocate nothing on valid input", "[codec][commit]") {
  for (const std::string& path : testing::FixtureFiles("fixtures")) {
    const boost::json::value fixture = testing::ReadJson(path);
    for (const boost::json::value& entry : fixture.at("commits").as_array()) {
      const std::string bytes = Unhex(entry.at("bytes").as_string());
      const long before = testing::AllocationCount();
      const bool scanned = Scan(bytes).has_value();
      const bool valid = ValidateCommit(bytes).has_value();
      const long made = testing::AllocationCount() - before;
      INFO(testing::BaseName(path));
      CHECK(scanned);
      CHECK(valid);
      CHECK(made == 0);
    }
  }
  // The counter does count: decoding builds a Commit.
  const long before = testing::AllocationCount();
  (void)DecodeCommit(Unhex(One("8400" + kId1 + kRefK + "05")));
  CHECK(testing::AllocationCount() > before);
}

}  // namespace
}  // namespace aweft::codec
