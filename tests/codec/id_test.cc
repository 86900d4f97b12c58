// Ids in their text form, and the hex helpers.
#include "codec/id.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>

namespace aweft::codec {
namespace {

Id Counted(uint8_t n) {
  Id id;
  id.bytes[11] = n;
  return id;
}

TEST_CASE("IdText writes the fixtures' counted ids", "[codec][id]") {
  CHECK(IdText(Counted(1)) == "AAAAAAAAAAAAAAAB");
  CHECK(IdText(Counted(2)) == "AAAAAAAAAAAAAAAC");
  CHECK(IdText(Counted(9)) == "AAAAAAAAAAAAAAAJ");
  CHECK(IdText(Counted(10)) == "AAAAAAAAAAAAAAAK");
  Id all;
  all.bytes.fill(0xff);
  CHECK(IdText(all) == "________________");
  Id mixed;
  for (uint8_t i = 0; i < 12; ++i) mixed.bytes[i] = static_cast<uint8_t>(i + 1);
  CHECK(IdText(mixed) == "AQIDBAUGBwgJCgsM");
}

TEST_CASE("An id's text form round-trips", "[codec][id]") {
  std::mt19937 random(86);
  for (int i = 0; i < 1000; ++i) {
    Id id;
    for (uint8_t& byte : id.bytes) byte = static_cast<uint8_t>(random());
    const std::string text = IdText(id);
    REQUIRE(text.size() == 16);
    auto back = IdFromText(text);
    REQUIRE(back.has_value());
    CHECK(*back == id);
  }
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  for (size_t at = 0; at < alphabet.size(); at += 16) {
    const std::string text = alphabet.substr(at, 16);
    auto id = IdFromText(text);
    REQUIRE(id.has_value());
    CHECK(IdText(*id) == text);
  }
}

TEST_CASE("IdFromText refuses anything but 16 base64url characters", "[codec][id]") {
  const std::string text =
      GENERATE(as<std::string>{}, "", "AAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAA",
               "AAAAAAAAAAAAAAA=", "AAAAAAAAAAAAAA==", "AAAAAAAAAAAAAAA+", "AAAAAAAAAAAAAAA/",
               "AAAAAAAA AAAAAAA", "AAAAAAAAAAAAAA\xc3\xa9", "AAAAAAAAAAAAAAA.");
  INFO(text);
  auto id = IdFromText(text);
  REQUIRE_FALSE(id.has_value());
  CHECK(id.error().reason == Reason::kInvalidId);
  CHECK(id.error().message != "");
}

TEST_CASE("IdFromBytes takes exactly 12 bytes", "[codec][id]") {
  CHECK(IdFromBytes(std::string(12, '\x01')).has_value());
  CHECK(IdFromBytes(std::string(11, '\x01')).error().reason == Reason::kInvalidId);
  CHECK(IdFromBytes(std::string(13, '\x01')).error().reason == Reason::kInvalidId);
  CHECK(IdFromBytes("").error().reason == Reason::kInvalidId);
  const std::string bytes("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\xfe\xff", 12);
  CHECK(IdFromBytes(bytes)->view() == bytes);
}

TEST_CASE("Hex round-trips and refuses what is not hex", "[codec][id]") {
  const std::string all = [] {
    std::string bytes;
    for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
    return bytes;
  }();
  const std::string hex = Hex(all);
  CHECK(hex.substr(0, 8) == "00010203");
  CHECK(hex.substr(hex.size() - 4) == "feff");
  CHECK(*FromHex(hex) == all);
  CHECK(*FromHex("DEADbeef") == "\xde\xad\xbe\xef");
  CHECK(*FromHex("") == "");
  CHECK(Hex("") == "");
  for (const char* bad : {"0", "abc", "0g", "g0", "  ", "0x00", "-1"}) {
    INFO(bad);
    auto bytes = FromHex(bad);
    REQUIRE_FALSE(bytes.has_value());
    CHECK(bytes.error().reason == Reason::kInvalidHex);
  }
}

}  // namespace
}  // namespace aweft::codec
