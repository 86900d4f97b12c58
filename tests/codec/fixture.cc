#include "fixture.h"

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "codec/id.h"

namespace aweft::codec::testing {
namespace json = boost::json;
namespace {

[[noreturn]] void Broken(const std::string& what) {
  throw std::runtime_error("malformed fixture: " + what);
}

std::string Text(const json::value& json) {
  if (!json.is_string()) Broken("expected a string");
  return std::string(json.as_string());
}

Id IdFrom(const json::value& json, IdForm form) {
  const std::string text = Text(json);
  auto id = form == IdForm::kText ? IdFromText(text) : IdFromBytes(Unhex(text));
  if (!id) Broken("bad id " + text);
  return *id;
}

Kind KindFrom(const json::value& json) {
  auto kind = KindFromName(Text(json));
  if (!kind) Broken("bad kind");
  return *kind;
}

Value ValueFrom(const json::value& json, IdForm form) {
  if (json.is_null()) return std::monostate{};
  if (json.is_bool()) return json.as_bool();
  if (json.is_number()) return NumberOf(json);
  if (json.is_string()) return Text(json);
  const json::object& object = json.as_object();
  if (const json::value* bytes = object.if_contains("bytes")) {
    return Bytes{Unhex(Text(*bytes))};
  }
  auto edge = EdgeFromName(Text(object.at("edge")));
  if (!edge) Broken("bad edge");
  return Reference{*edge, KindFrom(object.at("kind")), IdFrom(object.at("ref"), form)};
}

Delta DeltaFrom(const json::value& json, IdForm form) {
  const json::object& object = json.as_object();
  Delta delta;
  auto type = DeltaTypeFromName(Text(object.at("type")));
  if (!type) Broken("bad delta type");
  delta.type = *type;
  delta.id = IdFrom(object.at("id"), form);
  const json::object& ref = object.at("ref").as_object();
  delta.ref.kind = KindFrom(ref.at("kind"));
  const std::string key = Text(ref.at("key"));
  switch (delta.ref.kind) {
    case Kind::kObject:
      delta.ref.key = key;
      break;
    case Kind::kArray:
      delta.ref.key = Unhex(key);
      break;
    case Kind::kMap:
      delta.ref.key = std::string(IdFrom(ref.at("key"), form).view());
      break;
  }
  if (const json::value* value = object.if_contains("value")) {
    delta.value = ValueFrom(*value, form);
  }
  return delta;
}

uint64_t Count(const json::value& json) { return static_cast<uint64_t>(NumberOf(json)); }

WireReason ReasonFrom(const json::value& json) {
  const json::object& object = json.as_object();
  WireReason reason{Text(object.at("code")), Text(object.at("message")), {}};
  if (const json::value* path = object.if_contains("path")) {
    reason.path.emplace();
    for (const json::value& step : path->as_array()) {
      reason.path->push_back(Text(step));
    }
  }
  return reason;
}

}  // namespace

std::vector<std::string> FixtureFiles(std::string_view folder, std::string_view prefix) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  const fs::path dir = fs::path(AWEFT_CONFORMANCE_DIR) / folder;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && entry.path().extension() == ".json" &&
        name.starts_with(prefix)) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string BaseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

json::value ReadJson(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) Broken("cannot open " + path);
  std::stringstream text;
  text << file.rdbuf();
  return json::parse(text.str());
}

std::string Unhex(std::string_view hex) {
  auto bytes = FromHex(hex);
  if (!bytes) Broken("bad hex " + std::string(hex));
  return *bytes;
}

double NumberOf(const json::value& json) {
  // Integers go through int64 or uint64, and converting those to double
  // rounds once, exactly as parsing the digits as a double would.
  if (json.is_double()) return json.as_double();
  if (json.is_int64()) return static_cast<double>(json.as_int64());
  if (json.is_uint64()) return static_cast<double>(json.as_uint64());
  Broken("expected a number");
}

Commit CommitFromJson(const json::value& json, IdForm form) {
  const json::object& object = json.as_object();
  Commit commit;
  for (const json::value& delta : object.at("deltas").as_array()) {
    commit.deltas.push_back(DeltaFrom(delta, form));
  }
  if (const json::value* tag = object.if_contains("tag")) {
    commit.tag = Unhex(Text(*tag));
  }
  return commit;
}

Frame FrameFromJson(const json::value& json) {
  const json::object& object = json.as_object();
  const std::string kind = Text(object.at("kind"));
  const uint64_t topic = Count(object.at("topic"));
  if (kind == "open") {
    OpenFrame open{topic, Text(object.at("name")), {}, object.at("want").as_bool()};
    if (const json::value& root = object.at("root"); !root.is_null()) {
      open.root = RootRef{Unhex(Text(root.at("id"))), KindFrom(root.at("kind"))};
    }
    return open;
  }
  if (kind == "state") {
    StateFrame state{topic, {}};
    if (const json::value* commit = object.if_contains("commit")) {
      state.commit = CommitFromJson(*commit, IdForm::kHex);
    }
    return state;
  }
  if (kind == "commits") {
    CommitsFrame commits{topic, Count(object.at("first")), {}};
    for (const json::value& commit : object.at("commits").as_array()) {
      commits.commits.push_back(CommitFromJson(commit, IdForm::kHex));
    }
    return commits;
  }
  if (kind == "refused") {
    RefusedFrame refused{topic, Count(object.at("seq")), {}};
    for (const json::value& reason : object.at("reasons").as_array()) {
      refused.reasons.push_back(ReasonFrom(reason));
    }
    return refused;
  }
  if (kind == "leave") return LeaveFrame{topic};
  if (kind == "fault") {
    return FaultFrame{topic, Text(object.at("reason")), Text(object.at("message"))};
  }
  Broken("unknown frame kind " + kind);
}

void WriteWire(Writer& writer, const json::value& wire) {
  if (wire.is_null()) {
    writer.Null();
  } else if (wire.is_bool()) {
    writer.Bool(wire.as_bool());
  } else if (wire.is_number()) {
    writer.Number(NumberOf(wire));
  } else if (wire.is_string()) {
    writer.Text(wire.as_string());
  } else if (wire.is_array()) {
    writer.Array(wire.as_array().size());
    for (const json::value& item : wire.as_array()) WriteWire(writer, item);
  } else {
    writer.Bytes(Unhex(Text(wire.as_object().at("hex"))));
  }
}

}  // namespace aweft::codec::testing

namespace aweft::codec::testing {

Value ValueFromJson(const boost::json::value& json, IdForm form) { return ValueFrom(json, form); }

}  // namespace aweft::codec::testing
