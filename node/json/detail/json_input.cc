#include "node/json/detail/json_input.h"

#include "codec/id.h"

namespace aweft::node::detail {

namespace json = boost::json;
using codec::Reason;
using codec::Refusal;
using codec::Result;

Refusal Refuse(Reason reason, std::string_view where, std::string_view what) {
  return Refusal{reason, std::string(where) + ": " + std::string(what)};
}

Refusal At(std::string_view where, Refusal refusal) {
  refusal.message = std::string(where) + ": " + refusal.message;
  return refusal;
}

std::string Field(std::string_view where, std::string_view field) {
  return std::string(where) + "." + std::string(field);
}

std::string Item(std::string_view where, size_t index) {
  return std::string(where) + "[" + std::to_string(index) + "]";
}

Result<void> OnlyKeys(const json::object& object, std::initializer_list<std::string_view> allowed,
                      Reason reason, std::string_view where) {
  for (const auto& entry : object) {
    bool known = false;
    for (std::string_view key : allowed) known = known || entry.key() == key;
    if (!known) {
      return Refuse(reason, where, "unknown key \"" + std::string(entry.key()) + "\"");
    }
  }
  return {};
}

Result<const json::object*> ObjectAt(const json::value& json, Reason reason, std::string_view where,
                                     std::initializer_list<std::string_view> keys) {
  const json::object* object = json.if_object();
  if (object == nullptr) return Refuse(reason, where, "expected an object");
  if (auto known = OnlyKeys(*object, keys, reason, where); !known) {
    return known.error();
  }
  return object;
}

Result<std::string_view> TextAt(const json::object& object, std::string_view key, Reason reason,
                                std::string_view where) {
  const json::value* value = object.if_contains(key);
  if (value == nullptr) return Refuse(reason, where, "missing \"" + std::string(key) + "\"");
  if (!value->is_string()) return Refuse(reason, Field(where, key), "expected text");
  const json::string& text = value->get_string();
  return std::string_view(text.data(), text.size());
}

Result<std::string> HexAt(const json::value& json, Reason reason, std::string_view where) {
  if (!json.is_string()) return Refuse(reason, where, "expected hex text");
  Result<std::string> bytes = codec::FromHex(json.get_string());
  if (!bytes) return At(where, bytes.error());
  return bytes;
}

}  // namespace aweft::node::detail
