#include "node/json/commit_json.h"

#include <cmath>
#include <cstdint>
#include <string_view>
#include <utility>
#include <variant>

#include "codec/id.h"
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

template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;

// Whole numbers within the int64 range are written as integers, so that
// 2^55 reads 36028797018963968 and not 3.602879701896397E16.
json::value Number(double number) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (std::trunc(number) == number && number >= -kTwo63 && number < kTwo63) {
    return static_cast<int64_t>(number);
  }
  return number;
}

json::string IdToJson(const codec::Id& id, IdForm form) {
  return json::string(form == IdForm::kText ? codec::IdText(id) : codec::Hex(id.view()));
}

}  // namespace

json::value ValueToJson(const codec::Value& value, IdForm form) {
  return std::visit(Overloaded{
                        [](std::monostate) -> json::value { return nullptr; },
                        [](bool b) -> json::value { return b; },
                        [](double d) -> json::value { return Number(d); },
                        [](const std::string& text) -> json::value { return json::string(text); },
                        [](const codec::Bytes& bytes) -> json::value {
                          return json::object{{"bytes", codec::Hex(bytes.data)}};
                        },
                        [form](const codec::Reference& ref) -> json::value {
                          return json::object{{"ref", IdToJson(ref.id, form)},
                                              {"kind", codec::KindName(ref.kind)},
                                              {"edge", codec::EdgeName(ref.edge)}};
                        },
                    },
                    value);
}

namespace {

json::value KeyToJson(const codec::Ref& ref, IdForm form) {
  switch (ref.kind) {
    case codec::Kind::kObject:
      return json::string(ref.key);
    case codec::Kind::kArray:
      return json::string(codec::Hex(ref.key));
    case codec::Kind::kMap:
      break;
  }
  Result<codec::Id> id = codec::IdFromBytes(ref.key);
  // A map key that is not an id cannot come from the decoder; show its bytes.
  if (!id) return json::string(codec::Hex(ref.key));
  return IdToJson(*id, form);
}

json::value DeltaToJson(const codec::Delta& delta, IdForm form) {
  json::object out;
  out["type"] = codec::DeltaTypeName(delta.type);
  out["id"] = IdToJson(delta.id, form);
  out["ref"] =
      json::object{{"kind", codec::KindName(delta.ref.kind)}, {"key", KeyToJson(delta.ref, form)}};
  if (delta.value) out["value"] = ValueToJson(*delta.value, form);
  return out;
}

Result<codec::Id> IdFromJson(const json::value& json, IdForm form, std::string_view where) {
  if (!json.is_string()) return Refuse(Reason::kInvalidId, where, "expected an id");
  std::string_view text = json.get_string();
  if (form == IdForm::kText) {
    Result<codec::Id> id = codec::IdFromText(text);
    if (!id) return At(where, id.error());
    return id;
  }
  Result<std::string> bytes = codec::FromHex(text);
  if (!bytes) return At(where, bytes.error());
  Result<codec::Id> id = codec::IdFromBytes(*bytes);
  if (!id) return At(where, id.error());
  return id;
}

Result<codec::Value> ReferenceFromJson(const json::object& object, IdForm form,
                                       std::string_view where) {
  if (auto keys = OnlyKeys(object, {"ref", "kind", "edge"}, Reason::kInvalidReference, where);
      !keys) {
    return keys.error();
  }
  Result<codec::Id> id = IdFromJson(object.at("ref"), form, Field(where, "ref"));
  if (!id) return id.error();
  Result<codec::Kind> kind =
      NamedAt<codec::Kind>(object, "kind", codec::KindFromName, Reason::kInvalidReference,
                           Reason::kUnknownRefKind, where);
  if (!kind) return kind.error();
  Result<codec::Edge> edge =
      NamedAt<codec::Edge>(object, "edge", codec::EdgeFromName, Reason::kInvalidReference,
                           Reason::kUnknownEdgeKind, where);
  if (!edge) return edge.error();
  return codec::Value(codec::Reference{*edge, *kind, *id});
}

Result<codec::Value> ValueFromJson(const json::value& json, IdForm form, std::string_view where) {
  switch (json.kind()) {
    case json::kind::null:
      return codec::Value(std::monostate{});
    case json::kind::bool_:
      return codec::Value(json.get_bool());
    case json::kind::int64:
      return codec::Value(static_cast<double>(json.get_int64()));
    case json::kind::uint64:
      return codec::Value(static_cast<double>(json.get_uint64()));
    case json::kind::double_:
      return codec::Value(json.get_double());
    case json::kind::string:
      return codec::Value(std::string(json.get_string()));
    case json::kind::array:
      break;
    case json::kind::object: {
      const json::object& object = json.get_object();
      if (object.contains("ref")) return ReferenceFromJson(object, form, where);
      if (object.size() == 1 && object.contains("bytes")) {
        Result<std::string> bytes =
            HexAt(object.at("bytes"), Reason::kInvalidValue, Field(where, "bytes"));
        if (!bytes) return bytes.error();
        return codec::Value(codec::Bytes{std::move(*bytes)});
      }
      break;
    }
  }
  return Refuse(Reason::kInvalidValue, where,
                "expected null, a boolean, a number, text, {\"bytes\"} or "
                "{\"ref\",\"kind\",\"edge\"}");
}

Result<codec::Ref> RefFromJson(const json::value& json, IdForm form, std::string_view where) {
  auto object = ObjectAt(json, Reason::kInvalidRef, where, {"kind", "key"});
  if (!object) return object.error();
  Result<codec::Kind> kind = NamedAt<codec::Kind>(
      **object, "kind", codec::KindFromName, Reason::kInvalidRef, Reason::kUnknownRefKind, where);
  if (!kind) return kind.error();
  Result<std::string_view> key = TextAt(**object, "key", Reason::kInvalidRef, where);
  if (!key) return key.error();
  std::string key_where = Field(where, "key");
  switch (*kind) {
    case codec::Kind::kObject:
      return codec::Ref{*kind, std::string(*key)};
    case codec::Kind::kArray: {
      Result<std::string> position = HexAt((*object)->at("key"), Reason::kInvalidRef, key_where);
      if (!position) return position.error();
      return codec::Ref{*kind, std::move(*position)};
    }
    case codec::Kind::kMap:
      break;
  }
  Result<codec::Id> id = IdFromJson((*object)->at("key"), form, key_where);
  if (!id) return id.error();
  return codec::Ref{*kind, std::string(id->view())};
}

Result<codec::Delta> DeltaFromJson(const json::value& json, IdForm form, std::string_view where) {
  auto object = ObjectAt(json, Reason::kInvalidDelta, where, {"type", "id", "ref", "value"});
  if (!object) return object.error();
  const json::object& fields = **object;
  Result<codec::DeltaType> type =
      NamedAt<codec::DeltaType>(fields, "type", codec::DeltaTypeFromName, Reason::kInvalidDelta,
                                Reason::kUnknownDeltaType, where);
  if (!type) return type.error();
  if (!fields.contains("id")) return Refuse(Reason::kInvalidDelta, where, "missing \"id\"");
  Result<codec::Id> id = IdFromJson(fields.at("id"), form, Field(where, "id"));
  if (!id) return id.error();
  if (!fields.contains("ref")) return Refuse(Reason::kInvalidDelta, where, "missing \"ref\"");
  Result<codec::Ref> ref = RefFromJson(fields.at("ref"), form, Field(where, "ref"));
  if (!ref) return ref.error();
  codec::Delta delta{*type, *id, std::move(*ref), std::nullopt};
  // Presence is kept as given: EncodeCommit refuses a remove with a value
  // (unexpected-value) and an add without one (missing-value).
  if (const json::value* value = fields.if_contains("value")) {
    Result<codec::Value> decoded = ValueFromJson(*value, form, Field(where, "value"));
    if (!decoded) return decoded.error();
    delta.value = std::move(*decoded);
  }
  return delta;
}

}  // namespace

json::value CommitToJson(const codec::Commit& commit, IdForm form) {
  json::array deltas;
  deltas.reserve(commit.deltas.size());
  for (const codec::Delta& delta : commit.deltas) {
    deltas.push_back(DeltaToJson(delta, form));
  }
  json::object out{{"deltas", std::move(deltas)}};
  if (commit.tag) out["tag"] = codec::Hex(*commit.tag);
  return out;
}

Result<codec::Commit> CommitFromJson(const json::value& json, IdForm form) {
  auto object = ObjectAt(json, Reason::kInvalidCommit, "commit", {"deltas", "tag"});
  if (!object) return object.error();
  const json::value* deltas = (*object)->if_contains("deltas");
  if (deltas == nullptr || !deltas->is_array()) {
    return Refuse(Reason::kInvalidCommit, "commit.deltas", "expected an array of deltas");
  }
  codec::Commit commit;
  commit.deltas.reserve(deltas->get_array().size());
  for (size_t i = 0; i < deltas->get_array().size(); ++i) {
    Result<codec::Delta> delta =
        DeltaFromJson(deltas->get_array()[i], form, Item("commit.deltas", i));
    if (!delta) return delta.error();
    commit.deltas.push_back(std::move(*delta));
  }
  if (const json::value* tag = (*object)->if_contains("tag")) {
    Result<std::string> bytes = HexAt(*tag, Reason::kInvalidTag, "commit.tag");
    if (!bytes) return bytes.error();
    commit.tag = std::move(*bytes);
  }
  return commit;
}

json::value RefusalToJson(const codec::Refusal& refusal) {
  return json::object{{"reason", codec::Name(refusal.reason)},
                      {"message", refusal.message},
                      {"fix", codec::Fix(refusal.reason)}};
}

}  // namespace aweft::node
