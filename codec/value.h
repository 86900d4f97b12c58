#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace aweft::codec {

// An observable's id: 12 bytes from a secure random source (spec §6.10).
struct Id {
  std::array<uint8_t, 12> bytes{};

  std::string_view view() const {
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
  }
  auto operator<=>(const Id&) const = default;
};
inline constexpr size_t kIdSize = 12;

struct IdHash {
  size_t operator()(const Id& id) const noexcept;
};

// The three kinds of observable, with their wire numbers (spec §6.4).
enum class Kind : uint8_t { kObject = 0, kArray = 1, kMap = 2 };

// An attach edge is where an observable lives; an alias only names it.
enum class Edge : uint8_t { kAttach = 0, kAlias = 1 };

// A slot's value naming another observable: `[edge, kind, id]` on the wire.
struct Reference {
  Edge edge;
  Kind kind;
  Id id;
  bool operator==(const Reference&) const = default;
};

// A byte string value, kept apart from text (a std::string of UTF-8).
struct Bytes {
  std::string data;
  bool operator==(const Bytes&) const = default;
};

// A slot's value: null, a boolean, a finite number, text, bytes, or a
// reference. Numbers are doubles, as in the reference: a whole number within
// ±2^53 is written as an integer, anything else as a float64 (spec §6.2).
using Value = std::variant<std::monostate, bool, double, std::string, Bytes, Reference>;

// Which slot of an observable a delta addresses (spec §6.5). `key` is the
// text of an object key, the bytes of an array position, or the 12 bytes of
// a map key's id.
struct Ref {
  Kind kind;
  std::string key;
  bool operator==(const Ref&) const = default;
};

enum class DeltaType : uint8_t { kAdd = 0, kReplace = 1, kRemove = 2 };

// One change to one slot (spec §2). `value` is present for add and replace
// and absent for remove.
struct Delta {
  DeltaType type;
  Id id;
  Ref ref;
  std::optional<Value> value;
  bool operator==(const Delta&) const = default;
};

// Deltas that took effect together (spec §3), with an optional 4 to 32 byte
// integrity tag. A decoded commit's deltas are in canonical order.
struct Commit {
  std::vector<Delta> deltas;
  std::optional<std::string> tag;
  bool operator==(const Commit&) const = default;
};

// Spellings used in JSON and logs: "object", "attach", "add", ...
std::string_view KindName(Kind kind);
std::string_view EdgeName(Edge edge);
std::string_view DeltaTypeName(DeltaType type);
std::optional<Kind> KindFromName(std::string_view name);
std::optional<Edge> EdgeFromName(std::string_view name);
std::optional<DeltaType> DeltaTypeFromName(std::string_view name);

// True when `position` is non-empty and does not end in a zero byte (§6.6).
bool ValidPosition(std::string_view position);

// Orders deltas as the encoding of (id, ref) compares bytewise (§6.9):
// negative, zero (same slot) or positive.
int CompareSlots(const Delta& a, const Delta& b);

}  // namespace aweft::codec
