// Frames: round trips of every kind, the encoder's refusals, and how the
// decoder tells byte faults, bad commits and bad frames apart.
#include "codec/frame.h"

#include <catch2/catch.hpp>
#include <string>

#include "codec/commit.h"
#include "codec/id.h"
#include "fixture.h"

namespace aweft::codec {
namespace {

using testing::Unhex;

std::string DecodeReason(const std::string& hex) {
  auto decoded = DecodeFrame(Unhex(hex));
  if (!decoded) return std::string(Name(decoded.error().reason));
  CHECK(Hex(*EncodeFrame(*decoded)) == hex);
  return "ok";
}

std::string EncodeReason(const Frame& frame) {
  auto encoded = EncodeFrame(frame);
  return encoded ? "ok" : std::string(Name(encoded.error().reason));
}

Commit OneAdd() {
  Commit commit;
  Delta& delta = commit.deltas.emplace_back();
  delta.type = DeltaType::kAdd;
  delta.id.bytes[11] = 1;
  delta.ref = Ref{Kind::kObject, "title"};
  delta.value = std::string("plan");
  return commit;
}

TEST_CASE("Every frame kind survives a round trip", "[codec][frame]") {
  const Frame frame = GENERATE(values<Frame>({
      OpenFrame{1, "board:42", RootRef{std::string(12, '\x07'), Kind::kMap}, false},
      OpenFrame{9007199254740992u, "", std::nullopt, true},
      StateFrame{2, OneAdd()},
      StateFrame{2, std::nullopt},
      CommitsFrame{3, 5, {OneAdd(), OneAdd()}},
      RefusedFrame{4,
                   1,
                   {WireReason{"unreachable", "why", std::nullopt},
                    WireReason{"x", "", std::vector<std::string>{}},
                    WireReason{"y", "z", std::vector<std::string>{"a"}}}},
      LeaveFrame{7},
      FaultFrame{0, "bad-frame", "whole link"},
  }));
  INFO(FrameKindName(frame));
  auto bytes = EncodeFrame(frame);
  REQUIRE(bytes.has_value());
  auto decoded = DecodeFrame(*bytes);
  REQUIRE(decoded.has_value());
  CHECK(*decoded == frame);
}

TEST_CASE("EncodeFrame refuses a frame that would not decode", "[codec][frame]") {
  const uint64_t too_big = (uint64_t{1} << 53) + 1;
  CHECK(EncodeReason(OpenFrame{0, "b", std::nullopt, true}) == "bad-frame");
  CHECK(EncodeReason(OpenFrame{1, "b", std::nullopt, false}) == "bad-frame");
  CHECK(EncodeReason(OpenFrame{1, "b", RootRef{"id", Kind{3}}, false}) == "bad-frame");
  CHECK(EncodeReason(OpenFrame{too_big, "b", std::nullopt, true}) == "bad-frame");
  CHECK(EncodeReason(OpenFrame{1, "\xc3\x28", std::nullopt, true}) == "invalid-utf8");
  CHECK(EncodeReason(StateFrame{0, std::nullopt}) == "bad-frame");
  CHECK(EncodeReason(StateFrame{1, Commit{}}) == "empty-commit");
  CHECK(EncodeReason(CommitsFrame{0, 1, {OneAdd()}}) == "bad-frame");
  CHECK(EncodeReason(CommitsFrame{1, 0, {OneAdd()}}) == "bad-frame");
  CHECK(EncodeReason(CommitsFrame{1, too_big, {OneAdd()}}) == "bad-frame");
  CHECK(EncodeReason(CommitsFrame{1, 1, {}}) == "bad-frame");
  CHECK(EncodeReason(CommitsFrame{1, 1, {OneAdd(), Commit{}}}) == "empty-commit");
  const WireReason reason{"c", "m", std::nullopt};
  CHECK(EncodeReason(RefusedFrame{0, 1, {reason}}) == "bad-frame");
  CHECK(EncodeReason(RefusedFrame{1, 0, {reason}}) == "bad-frame");
  CHECK(EncodeReason(RefusedFrame{1, 1, {}}) == "bad-frame");
  const WireReason surrogate{"c", "m", std::vector<std::string>{"\xed\xa0\x80"}};
  CHECK(EncodeReason(RefusedFrame{1, 1, {surrogate}}) == "lone-surrogate");
  CHECK(EncodeReason(LeaveFrame{0}) == "bad-frame");
  CHECK(EncodeReason(FaultFrame{0, "r", "m"}) == "ok");
  CHECK(EncodeReason(FaultFrame{too_big, "r", "m"}) == "bad-frame");
}

TEST_CASE("DecodeFrame refuses numbers that are not small whole numbers", "[codec][frame]") {
  CHECK(DecodeReason("820407") == "ok");
  CHECK(DecodeReason("82041b0020000000000000") == "ok");  // 2^53
  // 2^64 can only be a float64. The reference takes it; this end refuses it.
  CHECK(DecodeReason("8204fb43f0000000000000") == "bad-frame");
  CHECK(DecodeReason("8204fb4340000000000001") == "bad-frame");  // 2^53 + 2
  CHECK(DecodeReason("820420") == "bad-frame");                  // -1
  CHECK(DecodeReason("8204fb3ff8000000000000") == "bad-frame");  // 1.5
  CHECK(DecodeReason("8204fbbff8000000000000") == "bad-frame");  // -1.5
  CHECK(DecodeReason("8204f5") == "bad-frame");
  CHECK(DecodeReason("820601") == "bad-frame");  // Kind 6.
  CHECK(DecodeReason("822001") == "bad-frame");  // Kind -1.
  CHECK(DecodeReason("82fb3ff800000000000001") == "bad-frame");
  CHECK(DecodeReason("82fb43f000000000000001") == "bad-frame");
  CHECK(DecodeReason("8405006162616d") == "ok");
  CHECK(DecodeReason("840520616261"
                     "6d") == "bad-frame");
}

TEST_CASE("DecodeFrame keeps byte-layer and commit reasons", "[codec][frame]") {
  CHECK(DecodeReason("8204") == "truncated");
  CHECK(DecodeReason("82040700") == "trailing-bytes");
  CHECK(DecodeReason("82041807") == "non-canonical-integer");
  CHECK(DecodeReason("8204a0") == "unsupported-major");
  CHECK(DecodeReason("84050061ff616d") == "invalid-utf8");
  // A state whose commit is empty, and one whose commit has a text delta.
  CHECK(DecodeReason("8301024281"
                     "80") == "empty-commit");
  CHECK(DecodeReason("830102428100") == "invalid-commit");
  // Structure around a commit is judged before the commit.
  CHECK(DecodeReason("84020100814281"
                     "80") == "bad-frame");  // first 0
  CHECK(DecodeReason("84020101814281"
                     "80") == "empty-commit");
  CHECK(DecodeReason("8403010081"
                     "83616361"
                     "6df6") == "bad-frame");  // seq 0
}

TEST_CASE("DecodeFrame checks an open's fields in the reference order", "[codec][frame]") {
  const std::string id = "4c0102030405060708090a0b0c";
  CHECK(DecodeReason("8600016162" + id + "00f4") == "ok");
  // The root id's width belongs to the link, not to the frame.
  CHECK(DecodeReason("860001616243010203"
                     "00f4") == "ok");
  CHECK(DecodeReason("86000161624000f4") == "ok");
  CHECK(DecodeReason("8600016162" + id + "03f4") == "bad-frame");
  CHECK(DecodeReason("8600016162" + id + "f6f5") == "bad-frame");
  CHECK(DecodeReason("8600016162f600f5") == "bad-frame");
  CHECK(DecodeReason("8600016162f6f6f4") == "bad-frame");
  CHECK(DecodeReason("8600016162f6f6f5") == "ok");
  CHECK(DecodeReason("8600016162616900f4") == "bad-frame");  // Id is text.
  CHECK(DecodeReason("86000007" + id + "00f4") == "bad-frame");
  CHECK(DecodeReason("8600006162" + id + "00f4") == "bad-frame");  // Topic 0.
  CHECK(DecodeReason("8500016162" + id + "00") == "bad-frame");
}

TEST_CASE("DecodeFrame checks a refused frame's reasons", "[codec][frame]") {
  auto refused = [](const std::string& reason) {
    return "84030101"
           "81" +
           reason;
  };
  CHECK(DecodeReason(refused("83616361"
                             "6df6")) == "ok");
  CHECK(DecodeReason(refused("83616361"
                             "6d80")) == "ok");
  CHECK(DecodeReason(refused("83616361"
                             "6d8161"
                             "70")) == "ok");
  CHECK(DecodeReason(refused("83616361"
                             "6d8101")) == "bad-frame");
  CHECK(DecodeReason(refused("83616361"
                             "6d01")) == "bad-frame");
  CHECK(DecodeReason(refused("82016161")) == "bad-frame");
  CHECK(DecodeReason(refused("8301616df6")) == "bad-frame");
  CHECK(DecodeReason(refused("83616301f6")) == "bad-frame");
  CHECK(DecodeReason(refused("f6")) == "bad-frame");
  CHECK(DecodeReason("8403010180") == "bad-frame");
  CHECK(DecodeReason("84030101f6") == "bad-frame");
}

TEST_CASE("FrameKindName names each kind", "[codec][frame]") {
  CHECK(FrameKindName(OpenFrame{}) == "open");
  CHECK(FrameKindName(StateFrame{}) == "state");
  CHECK(FrameKindName(CommitsFrame{}) == "commits");
  CHECK(FrameKindName(RefusedFrame{}) == "refused");
  CHECK(FrameKindName(LeaveFrame{}) == "leave");
  CHECK(FrameKindName(FaultFrame{}) == "fault");
}

}  // namespace
}  // namespace aweft::codec
