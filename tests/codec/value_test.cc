// Values: the names of kinds, edges and types, positions, and the canonical
// order of slots checked against the encoding it stands for.
#include "codec/value.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <unordered_set>

#include "codec/cbor.h"

namespace aweft::codec {
namespace {

// The spec's definition of the order: the encoded id, then the encoded ref,
// compared as unsigned bytes.
std::string EncodedSlot(const Delta& delta) {
  std::string out;
  Writer writer(out);
  writer.Bytes(delta.id.view());
  writer.Array(2);
  writer.Uint(static_cast<uint8_t>(delta.ref.kind));
  if (delta.ref.kind == Kind::kObject) {
    writer.Text(delta.ref.key);
  } else {
    writer.Bytes(delta.ref.key);
  }
  return out;
}

int Sign(int order) { return order < 0 ? -1 : order > 0 ? 1 : 0; }

int CompareEncoded(const Delta& a, const Delta& b) {
  const std::string x = EncodedSlot(a);
  const std::string y = EncodedSlot(b);
  return Sign(x.compare(y));  // char_traits<char> compares as unsigned char.
}

Delta At(uint8_t id, Kind kind, std::string key) {
  // Only the slot matters to the order, so the delta is a remove.
  Delta delta{DeltaType::kRemove, {}, Ref{kind, std::move(key)}, {}};
  delta.id.bytes[11] = id;
  delta.id.bytes[0] = static_cast<uint8_t>(id * 37);
  return delta;
}

TEST_CASE("CompareSlots agrees with comparing the encodings", "[codec][value]") {
  // Keys chosen where byte order, length order and UTF-16 order disagree.
  const std::vector<std::string> keys = {"",
                                         "a",
                                         "b",
                                         "aa",
                                         "ab",
                                         "\x7f",
                                         "\xc2\x80",
                                         "\xef\xbf\xbf",
                                         "\xf0\x9f\x94\x91",
                                         "\xee\x80\x80"
                                         "a",
                                         std::string(23, 'z'),
                                         std::string(24, 'a'),
                                         std::string(255, 'b'),
                                         std::string(256, 'a'),
                                         std::string("\x00", 1),
                                         std::string("\xff\x01", 2)};
  std::vector<Delta> slots;
  for (uint8_t id : {1, 2, 200}) {
    for (Kind kind : {Kind::kObject, Kind::kArray, Kind::kMap}) {
      for (const std::string& key : keys) slots.push_back(At(id, kind, key));
    }
  }
  for (const Delta& a : slots) {
    for (const Delta& b : slots) {
      INFO(a.ref.key << " vs " << b.ref.key);
      REQUIRE(CompareSlots(a, b) == CompareEncoded(a, b));
    }
  }
}

TEST_CASE("CompareSlots agrees with the encodings on random slots", "[codec][value]") {
  std::mt19937 random(20260913);
  auto slot = [&random] {
    Delta delta = At(0, static_cast<Kind>(random() % 3), "");
    for (uint8_t& byte : delta.id.bytes) byte = random() % 2;  // Collide often.
    const size_t length = random() % 4 == 0 ? random() % 300 : random() % 4;
    for (size_t i = 0; i < length; ++i) {
      delta.ref.key.push_back(static_cast<char>(random() % 3 == 0 ? random() : 'a'));
    }
    return delta;
  };
  for (int i = 0; i < 20000; ++i) {
    const Delta a = slot();
    const Delta b = random() % 8 == 0 ? a : slot();
    REQUIRE(CompareSlots(a, b) == CompareEncoded(a, b));
  }
}

TEST_CASE("CompareSlots orders by id, then kind, then key", "[codec][value]") {
  CHECK(CompareSlots(At(1, Kind::kMap, "zz"), At(2, Kind::kObject, "")) < 0);
  CHECK(CompareSlots(At(1, Kind::kObject, "zz"), At(1, Kind::kArray, "a")) < 0);
  CHECK(CompareSlots(At(1, Kind::kObject, "z"), At(1, Kind::kObject, "aa")) < 0);
  // U+FFFF sorts below U+1F511 in UTF-8, though not in UTF-16 code units...
  CHECK(CompareSlots(At(1, Kind::kObject,
                        "\xef\xbf\xbf"
                        "a"),
                     At(1, Kind::kObject, "\xf0\x9f\x94\x91")) < 0);
  // ...and U+E000 sorts above U+1F511's lead bytes only when longer.
  CHECK(CompareSlots(At(1, Kind::kObject, "\xee\x80\x80"),
                     At(1, Kind::kObject, "\xf0\x9f\x94\x91")) < 0);
  CHECK(CompareSlots(At(1, Kind::kArray, "\x80"), At(1, Kind::kArray, "\x7f")) > 0);
  CHECK(CompareSlots(At(1, Kind::kArray, "ab"), At(1, Kind::kArray, "ab")) == 0);
}

TEST_CASE("ValidPosition wants non-empty bytes not ending in zero", "[codec][value]") {
  CHECK(ValidPosition("\x01"));
  CHECK(ValidPosition(std::string("\x00\x01", 2)));
  CHECK(ValidPosition("\xff"));
  CHECK_FALSE(ValidPosition(""));
  CHECK_FALSE(ValidPosition(std::string("\x00", 1)));
  CHECK_FALSE(ValidPosition(std::string("\x40\x00", 2)));
}

TEST_CASE("Kind, edge and delta type names round-trip", "[codec][value]") {
  for (Kind kind : {Kind::kObject, Kind::kArray, Kind::kMap}) {
    CHECK(KindFromName(KindName(kind)) == kind);
  }
  for (Edge edge : {Edge::kAttach, Edge::kAlias}) {
    CHECK(EdgeFromName(EdgeName(edge)) == edge);
  }
  for (DeltaType type : {DeltaType::kAdd, DeltaType::kReplace, DeltaType::kRemove}) {
    CHECK(DeltaTypeFromName(DeltaTypeName(type)) == type);
  }
  CHECK(KindName(Kind::kMap) == "map");
  CHECK(EdgeName(Edge::kAlias) == "alias");
  CHECK(DeltaTypeName(DeltaType::kReplace) == "replace");
  CHECK_FALSE(KindFromName("Object").has_value());
  CHECK_FALSE(EdgeFromName("").has_value());
  CHECK_FALSE(DeltaTypeFromName("delete").has_value());
}

TEST_CASE("IdHash spreads ids", "[codec][value]") {
  std::unordered_set<size_t> hashes;
  for (uint8_t i = 0; i < 200; ++i) {
    Id low;
    low.bytes[11] = i;
    Id high;
    high.bytes[0] = i;
    hashes.insert(IdHash{}(low));
    hashes.insert(IdHash{}(high));
  }
  CHECK(hashes.size() == 399);  // The zero id appears twice.
}

}  // namespace
}  // namespace aweft::codec
