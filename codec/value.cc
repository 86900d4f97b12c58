#include "codec/value.h"

#include <cstring>

namespace aweft::codec {

size_t IdHash::operator()(const Id& id) const noexcept {
  // Ids are uniformly random (spec §6.10), so folding their words is enough.
  uint64_t high = 0;
  uint32_t low = 0;
  std::memcpy(&high, id.bytes.data(), sizeof(high));
  std::memcpy(&low, id.bytes.data() + sizeof(high), sizeof(low));
  return static_cast<size_t>(high ^ (uint64_t{low} * 0x9e3779b97f4a7c15u));
}

// clang-format off
std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kObject: return "object";
    case Kind::kArray:  return "array";
    case Kind::kMap:    return "map";
  }
  return "unknown";
}

std::string_view EdgeName(Edge edge) {
  switch (edge) {
    case Edge::kAttach: return "attach";
    case Edge::kAlias:  return "alias";
  }
  return "unknown";
}

std::string_view DeltaTypeName(DeltaType type) {
  switch (type) {
    case DeltaType::kAdd:     return "add";
    case DeltaType::kReplace: return "replace";
    case DeltaType::kRemove:  return "remove";
  }
  return "unknown";
}
// clang-format on

std::optional<Kind> KindFromName(std::string_view name) {
  for (Kind kind : {Kind::kObject, Kind::kArray, Kind::kMap}) {
    if (KindName(kind) == name) return kind;
  }
  return std::nullopt;
}

std::optional<Edge> EdgeFromName(std::string_view name) {
  for (Edge edge : {Edge::kAttach, Edge::kAlias}) {
    if (EdgeName(edge) == name) return edge;
  }
  return std::nullopt;
}

std::optional<DeltaType> DeltaTypeFromName(std::string_view name) {
  for (DeltaType type : {DeltaType::kAdd, DeltaType::kReplace, DeltaType::kRemove}) {
    if (DeltaTypeName(type) == name) return type;
  }
  return std::nullopt;
}

bool ValidPosition(std::string_view position) {
  return !position.empty() && position.back() != '\0';
}

// The encoding of (id, ref) is `4c <12 id bytes> 82 <kind> <key head> <key>`.
// Ids share one head, so their bytes decide first. A kind below 24 is one
// byte holding itself. Both keys of one kind share a major type, and a
// shortest head grows with the length it holds, so a shorter key sorts first
// and equal lengths compare bytewise (as unsigned bytes, like memcmp).
int CompareSlots(const Delta& a, const Delta& b) {
  if (a.id != b.id) return a.id < b.id ? -1 : 1;
  if (a.ref.kind != b.ref.kind) return a.ref.kind < b.ref.kind ? -1 : 1;
  const std::string& x = a.ref.key;
  const std::string& y = b.ref.key;
  if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
  const int order = std::memcmp(x.data(), y.data(), x.size());
  return order < 0 ? -1 : order > 0 ? 1 : 0;
}

}  // namespace aweft::codec
