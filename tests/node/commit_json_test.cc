#include "node/json/commit_json.h"

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>
#include <string>

#include "codec/id.h"
#include "codec/json.h"

namespace aweft::node {
namespace {

namespace json = boost::json;

codec::Commit OneAdd(codec::Value value) {
  codec::Id id;
  id.bytes[11] = 1;
  return codec::Commit{{codec::Delta{codec::DeltaType::kAdd, id,
                                     codec::Ref{codec::Kind::kObject, "k"}, std::move(value)}},
                       std::nullopt};
}

std::string ValueText(double number) {
  json::value commit = CommitToJson(OneAdd(number), IdForm::kText);
  return codec::WriteJson(commit.at("deltas").at(0).at("value"));
}

TEST_CASE("numbers print in their shortest round-trip form", "[node]") {
  CHECK(ValueText(0) == "0");
  CHECK(ValueText(-1) == "-1");
  CHECK(ValueText(0.5) == "0.5");
  CHECK(ValueText(1e-7) == "1e-7");
  CHECK(ValueText(1e300) == "1e+300");
  CHECK(ValueText(-2.5e-300) == "-2.5e-300");
  CHECK(ValueText(9007199254740992.0) == "9007199254740992");
  CHECK(ValueText(36028797018963968.0) == "36028797018963968");
  CHECK(ValueText(0.1) == "0.1");
}

TEST_CASE("a commit prints in the fixtures' shape", "[node]") {
  codec::Commit commit = OneAdd(codec::Bytes{std::string("\x00\xff", 2)});
  commit.tag = std::string("\x9f\x2b\x41\xc7");
  CHECK(codec::WriteJson(CommitToJson(commit, IdForm::kText)) ==
        R"({"deltas":[{"type":"add","id":"AAAAAAAAAAAAAAAB",)"
        R"("ref":{"kind":"object","key":"k"},"value":{"bytes":"00ff"}}],)"
        R"("tag":"9f2b41c7"})");
  CHECK(codec::WriteJson(CommitToJson(commit, IdForm::kHex))
            .find(R"("id":"000000000000000000000001")") != std::string::npos);
}

TEST_CASE("CommitFromJson reads what CommitToJson writes", "[node]") {
  codec::Id other;
  other.bytes[0] = 0xfb;
  codec::Commit commit = OneAdd(codec::Reference{codec::Edge::kAlias, codec::Kind::kMap, other});
  commit.deltas.push_back(codec::Delta{codec::DeltaType::kRemove, other,
                                       codec::Ref{codec::Kind::kMap, std::string(other.view())},
                                       std::nullopt});
  commit.deltas.push_back(codec::Delta{codec::DeltaType::kReplace, other,
                                       codec::Ref{codec::Kind::kArray, "\x20\x01"},
                                       codec::Value(std::string("\xf0\x9f\x94\x91"))});
  for (IdForm form : {IdForm::kText, IdForm::kHex}) {
    json::value text = json::parse(codec::WriteJson(CommitToJson(commit, form)));
    codec::Result<codec::Commit> back = CommitFromJson(text, form);
    REQUIRE(back);
    CHECK(*back == commit);
  }
}

TEST_CASE("CommitFromJson names where the input went wrong", "[node][refusal]") {
  json::value input = json::parse(R"({"deltas":[{"type":"add","id":"AAAAAAAAAAAAAAAB",)"
                                  R"("ref":{"kind":"list","key":"k"},"value":1}]})");
  codec::Result<codec::Commit> commit = CommitFromJson(input, IdForm::kText);
  REQUIRE_FALSE(commit);
  CHECK(commit.error().reason == codec::Reason::kUnknownRefKind);
  CHECK(commit.error().message.find("commit.deltas[0].ref.kind") != std::string::npos);
}

TEST_CASE("FrameFromJson reads what FrameToJson writes", "[node]") {
  codec::Frame frames[] = {
      codec::OpenFrame{1, "board", codec::RootRef{"\x01\x02", codec::Kind::kArray}, false},
      codec::OpenFrame{2, "board", std::nullopt, true},
      codec::StateFrame{3, OneAdd(true)},
      codec::StateFrame{3, std::nullopt},
      codec::CommitsFrame{4, 9, {OneAdd(std::monostate{}), OneAdd(2.5)}},
      codec::RefusedFrame{5, 6, {{"a", "b", std::vector<std::string>{}}, {"c", "d", std::nullopt}}},
      codec::LeaveFrame{7},
      codec::FaultFrame{0, "bad-frame", "why"},
  };
  for (const codec::Frame& frame : frames) {
    CAPTURE(codec::WriteJson(FrameToJson(frame)));
    codec::Result<codec::Frame> back =
        FrameFromJson(json::parse(codec::WriteJson(FrameToJson(frame))));
    REQUIRE(back);
    CHECK(*back == frame);
  }
}

TEST_CASE("a refusal prints as reason, message and fix", "[node][refusal]") {
  codec::Refusal refusal{codec::Reason::kTruncated, "ran out"};
  json::value out = RefusalToJson(refusal);
  CHECK(out.at("reason") == json::value("truncated"));
  CHECK(out.at("message") == json::value("ran out"));
  CHECK(out.at("fix") == json::value(codec::Fix(codec::Reason::kTruncated)));
}

}  // namespace
}  // namespace aweft::node
