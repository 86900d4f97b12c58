#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "codec/refusal.h"
#include "codec/result.h"

// Reading JSON input field by field, refusing with a message that says where
// the fault is: "commit.deltas[2].ref.kind: ...". Shared by commit_json.cc
// and frame_json.cc; not for use outside node/.
namespace aweft::node::detail {

// A refusal whose message starts with `where`.
codec::Refusal Refuse(codec::Reason reason, std::string_view where, std::string_view what);

// `refusal`, its message prefixed with `where`.
codec::Refusal At(std::string_view where, codec::Refusal refusal);

// "where.field" and "where[index]".
std::string Field(std::string_view where, std::string_view field);
std::string Item(std::string_view where, size_t index);

// Refuses a key outside `allowed`, so a misspelt optional field ("tags") is
// reported rather than silently ignored.
codec::Result<void> OnlyKeys(const boost::json::object& object,
                             std::initializer_list<std::string_view> allowed, codec::Reason reason,
                             std::string_view where);

// `json` as an object with no keys outside `keys`.
codec::Result<const boost::json::object*> ObjectAt(const boost::json::value& json,
                                                   codec::Reason reason, std::string_view where,
                                                   std::initializer_list<std::string_view> keys);

// The text under `key`. The view lives as long as `object`.
codec::Result<std::string_view> TextAt(const boost::json::object& object, std::string_view key,
                                       codec::Reason reason, std::string_view where);

// The bytes `json` spells in hex; bad hex is invalid-hex.
codec::Result<std::string> HexAt(const boost::json::value& json, codec::Reason reason,
                                 std::string_view where);

// The value `from_name` gives for the text under `key`: refused with
// `missing` when there is no such text, with `unknown` when the name is not
// one `from_name` knows.
template <typename T>
codec::Result<T> NamedAt(const boost::json::object& object, std::string_view key,
                         std::optional<T> (*from_name)(std::string_view), codec::Reason missing,
                         codec::Reason unknown, std::string_view where) {
  codec::Result<std::string_view> name = TextAt(object, key, missing, where);
  if (!name) return name.error();
  std::optional<T> value = from_name(*name);
  if (!value) {
    return Refuse(unknown, Field(where, key), "\"" + std::string(*name) + "\" is not a known name");
  }
  return *value;
}

}  // namespace aweft::node::detail
