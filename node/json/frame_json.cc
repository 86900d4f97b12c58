// The frame half of commit_json.h: frames <-> the frame fixtures' JSON.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "codec/id.h"
#include "node/json/commit_json.h"
#include "node/json/detail/json_input.h"

namespace aweft::node {
namespace {

namespace json = boost::json;
using codec::Reason;
using codec::Refusal;
using codec::Result;
using detail::At;
using detail::Field;
using detail::HexAt;
using detail::Item;
using detail::NamedAt;
using detail::ObjectAt;
using detail::OnlyKeys;
using detail::Refuse;
using detail::TextAt;

json::value FrameBody(const codec::OpenFrame& open) {
  json::value root = nullptr;
  if (open.root) {
    root =
        json::object{{"id", codec::Hex(open.root->id)}, {"kind", codec::KindName(open.root->kind)}};
  }
  return json::object{{"kind", "open"},
                      {"topic", open.topic},
                      {"name", open.name},
                      {"root", std::move(root)},
                      {"want", open.want}};
}

json::value FrameBody(const codec::StateFrame& state) {
  json::object out{{"kind", "state"}, {"topic", state.topic}};
  if (state.commit) out["commit"] = CommitToJson(*state.commit, IdForm::kHex);
  return out;
}

json::value FrameBody(const codec::CommitsFrame& commits) {
  json::array list;
  for (const codec::Commit& commit : commits.commits) {
    list.push_back(CommitToJson(commit, IdForm::kHex));
  }
  return json::object{{"kind", "commits"},
                      {"topic", commits.topic},
                      {"first", commits.first},
                      {"commits", std::move(list)}};
}

json::value FrameBody(const codec::RefusedFrame& refused) {
  json::array reasons;
  for (const codec::WireReason& reason : refused.reasons) {
    json::object entry{{"code", reason.code}, {"message", reason.message}};
    if (reason.path) {
      json::array path;
      for (const std::string& step : *reason.path) path.push_back(json::string(step));
      entry["path"] = std::move(path);
    }
    reasons.push_back(std::move(entry));
  }
  return json::object{{"kind", "refused"},
                      {"topic", refused.topic},
                      {"seq", refused.seq},
                      {"reasons", std::move(reasons)}};
}

json::value FrameBody(const codec::LeaveFrame& leave) {
  return json::object{{"kind", "leave"}, {"topic", leave.topic}};
}

json::value FrameBody(const codec::FaultFrame& fault) {
  return json::object{{"kind", "fault"},
                      {"topic", fault.topic},
                      {"reason", fault.reason},
                      {"message", fault.message}};
}

Refusal BadFrame(std::string_view where, std::string_view what) {
  return Refuse(Reason::kBadFrame, where, what);
}

// A frame's number fields are whole and non-negative; a JSON reader may hand
// them over as int64, uint64 or (above 2^64 or written 1e3) double.
Result<uint64_t> UintAt(const json::object& object, std::string_view key, std::string_view where) {
  const json::value* value = object.if_contains(key);
  std::string field = Field(where, key);
  if (value == nullptr) return BadFrame(where, "missing \"" + std::string(key) + "\"");
  if (value->is_uint64()) return value->get_uint64();
  if (value->is_int64() && value->get_int64() >= 0) {
    return static_cast<uint64_t>(value->get_int64());
  }
  if (value->is_double()) {
    double d = value->get_double();
    if (std::trunc(d) == d && d >= 0 && d < 18446744073709551616.0) {
      return static_cast<uint64_t>(d);
    }
  }
  return BadFrame(field, "expected a whole number >= 0");
}

Result<std::string> FrameTextAt(const json::object& object, std::string_view key,
                                std::string_view where) {
  Result<std::string_view> text = TextAt(object, key, Reason::kBadFrame, where);
  if (!text) return text.error();
  return std::string(*text);
}

Result<codec::Frame> OpenFromJson(const json::object& object) {
  auto keys =
      OnlyKeys(object, {"kind", "topic", "name", "root", "want"}, Reason::kBadFrame, "frame");
  if (!keys) return keys.error();
  codec::OpenFrame open{};
  auto topic = UintAt(object, "topic", "frame");
  if (!topic) return topic.error();
  auto name = FrameTextAt(object, "name", "frame");
  if (!name) return name.error();
  const json::value* want = object.if_contains("want");
  if (want == nullptr || !want->is_bool()) return BadFrame("frame.want", "expected a boolean");
  const json::value* root = object.if_contains("root");
  if (root == nullptr) return BadFrame("frame", "missing \"root\" (null when none)");
  if (!root->is_null()) {
    auto fields = ObjectAt(*root, Reason::kBadFrame, "frame.root", {"id", "kind"});
    if (!fields) return fields.error();
    const json::value* id = (*fields)->if_contains("id");
    if (id == nullptr) return BadFrame("frame.root", "missing \"id\"");
    Result<std::string> bytes = HexAt(*id, Reason::kBadFrame, "frame.root.id");
    if (!bytes) return bytes.error();
    auto kind = NamedAt<codec::Kind>(**fields, "kind", codec::KindFromName, Reason::kBadFrame,
                                     Reason::kBadFrame, "frame.root");
    if (!kind) return kind.error();
    open.root = codec::RootRef{std::move(*bytes), *kind};
  }
  open.topic = *topic;
  open.name = std::move(*name);
  open.want = want->get_bool();
  return codec::Frame(std::move(open));
}

Result<codec::Frame> StateFromJson(const json::object& object) {
  auto keys = OnlyKeys(object, {"kind", "topic", "commit"}, Reason::kBadFrame, "frame");
  if (!keys) return keys.error();
  auto topic = UintAt(object, "topic", "frame");
  if (!topic) return topic.error();
  codec::StateFrame state{*topic, std::nullopt};
  if (const json::value* commit = object.if_contains("commit")) {
    Result<codec::Commit> decoded = CommitFromJson(*commit, IdForm::kHex);
    if (!decoded) return At("frame.commit", decoded.error());
    state.commit = std::move(*decoded);
  }
  return codec::Frame(std::move(state));
}

Result<codec::Frame> CommitsFromJson(const json::object& object) {
  auto keys = OnlyKeys(object, {"kind", "topic", "first", "commits"}, Reason::kBadFrame, "frame");
  if (!keys) return keys.error();
  auto topic = UintAt(object, "topic", "frame");
  if (!topic) return topic.error();
  auto first = UintAt(object, "first", "frame");
  if (!first) return first.error();
  const json::value* list = object.if_contains("commits");
  if (list == nullptr || !list->is_array()) {
    return BadFrame("frame.commits", "expected an array of commits");
  }
  codec::CommitsFrame commits{*topic, *first, {}};
  for (size_t i = 0; i < list->get_array().size(); ++i) {
    Result<codec::Commit> commit = CommitFromJson(list->get_array()[i], IdForm::kHex);
    if (!commit) return At(Item("frame.commits", i), commit.error());
    commits.commits.push_back(std::move(*commit));
  }
  return codec::Frame(std::move(commits));
}

Result<codec::WireReason> WireReasonFromJson(const json::value& json, std::string_view where) {
  auto object = ObjectAt(json, Reason::kBadFrame, where, {"code", "message", "path"});
  if (!object) return object.error();
  auto code = FrameTextAt(**object, "code", where);
  if (!code) return code.error();
  auto message = FrameTextAt(**object, "message", where);
  if (!message) return message.error();
  codec::WireReason reason{std::move(*code), std::move(*message), std::nullopt};
  if (const json::value* path = (*object)->if_contains("path")) {
    if (!path->is_array()) return BadFrame(Field(where, "path"), "expected an array of text");
    reason.path.emplace();
    for (const json::value& step : path->get_array()) {
      if (!step.is_string()) return BadFrame(Field(where, "path"), "expected an array of text");
      reason.path->emplace_back(step.get_string());
    }
  }
  return reason;
}

Result<codec::Frame> RefusedFromJson(const json::object& object) {
  auto keys = OnlyKeys(object, {"kind", "topic", "seq", "reasons"}, Reason::kBadFrame, "frame");
  if (!keys) return keys.error();
  auto topic = UintAt(object, "topic", "frame");
  if (!topic) return topic.error();
  auto seq = UintAt(object, "seq", "frame");
  if (!seq) return seq.error();
  const json::value* list = object.if_contains("reasons");
  if (list == nullptr || !list->is_array()) {
    return BadFrame("frame.reasons", "expected an array of reasons");
  }
  codec::RefusedFrame refused{*topic, *seq, {}};
  for (size_t i = 0; i < list->get_array().size(); ++i) {
    auto reason = WireReasonFromJson(list->get_array()[i], Item("frame.reasons", i));
    if (!reason) return reason.error();
    refused.reasons.push_back(std::move(*reason));
  }
  return codec::Frame(std::move(refused));
}

Result<codec::Frame> LeaveFromJson(const json::object& object) {
  auto keys = OnlyKeys(object, {"kind", "topic"}, Reason::kBadFrame, "frame");
  if (!keys) return keys.error();
  auto topic = UintAt(object, "topic", "frame");
  if (!topic) return topic.error();
  return codec::Frame(codec::LeaveFrame{*topic});
}

Result<codec::Frame> FaultFromJson(const json::object& object) {
  auto keys = OnlyKeys(object, {"kind", "topic", "reason", "message"}, Reason::kBadFrame, "frame");
  if (!keys) return keys.error();
  auto topic = UintAt(object, "topic", "frame");
  if (!topic) return topic.error();
  auto reason = FrameTextAt(object, "reason", "frame");
  if (!reason) return reason.error();
  auto message = FrameTextAt(object, "message", "frame");
  if (!message) return message.error();
  return codec::Frame(codec::FaultFrame{*topic, std::move(*reason), std::move(*message)});
}

}  // namespace

json::value FrameToJson(const codec::Frame& frame) {
  return std::visit([](const auto& body) { return FrameBody(body); }, frame);
}

Result<codec::Frame> FrameFromJson(const json::value& json) {
  const json::object* object = json.if_object();
  if (object == nullptr) return BadFrame("frame", "expected an object");
  Result<std::string_view> kind = TextAt(*object, "kind", Reason::kBadFrame, "frame");
  if (!kind) return kind.error();
  if (*kind == "open") return OpenFromJson(*object);
  if (*kind == "state") return StateFromJson(*object);
  if (*kind == "commits") return CommitsFromJson(*object);
  if (*kind == "refused") return RefusedFromJson(*object);
  if (*kind == "leave") return LeaveFromJson(*object);
  if (*kind == "fault") return FaultFromJson(*object);
  return BadFrame("frame.kind", "\"" + std::string(*kind) +
                                    "\" is not open, state, commits, refused, "
                                    "leave or fault");
}

}  // namespace aweft::node
