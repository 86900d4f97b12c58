// The byte layer: Scan's rules one by one, the Writer's numbers, the Reader,
// and the UTF-8 checks of the encoder.
#include "codec/cbor.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "codec/id.h"
#include "fixture.h"

namespace aweft::codec {
namespace {

using testing::Unhex;

// Scan's verdict as a reason name, or "ok".
std::string Verdict(std::string_view bytes) {
  auto scanned = Scan(bytes);
  return scanned ? "ok" : std::string(Name(scanned.error().reason));
}

std::string Repeat(std::string_view hex, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += hex;
  return out;
}

struct Case {
  const char* hex;
  const char* verdict;
};

TEST_CASE("Scan accepts shortest heads and refuses wider ones", "[codec][cbor]") {
  const Case c = GENERATE(values<Case>({
      {"00", "ok"},
      {"17", "ok"},
      {"1818", "ok"},
      {"1817", "non-canonical-integer"},
      {"1800", "non-canonical-integer"},
      {"190100", "ok"},
      {"1900ff", "non-canonical-integer"},
      {"1a00010000", "ok"},
      {"1a0000ffff", "non-canonical-integer"},
      {"1b0000000100000000", "ok"},
      {"1b00000000ffffffff", "non-canonical-integer"},
      {"1b0000000000000000", "non-canonical-integer"},
      {"3817", "non-canonical-integer"},
      {"5800", "non-canonical-integer"},
      {"7817", "non-canonical-integer"},
      {"9800", "non-canonical-integer"},
  }));
  INFO(c.hex);
  CHECK(Verdict(Unhex(c.hex)) == c.verdict);
}

TEST_CASE("Scan keeps integers and lengths within 2^53", "[codec][cbor]") {
  const Case c = GENERATE(values<Case>({
      {"1b0020000000000000", "ok"},                    // 2^53
      {"1b001fffffffffffff", "ok"},                    // 2^53 - 1
      {"1b0020000000000001", "integer-out-of-range"},  // 2^53 + 1
      {"1b0100000000000000", "integer-out-of-range"},
      {"1bffffffffffffffff", "integer-out-of-range"},
      {"3b001fffffffffffff", "ok"},                    // -2^53
      {"3b0020000000000000", "integer-out-of-range"},  // -2^53 - 1
      {"3bffffffffffffffff", "integer-out-of-range"},
      {"5b0020000000000001", "integer-out-of-range"},  // a length
      {"7bffffffffffffffff", "integer-out-of-range"},
      {"9b0020000000000001", "integer-out-of-range"},
      {"5b0000000100000000", "truncated"},  // In range, but not there.
      {"9b0000000100000000", "truncated"},
  }));
  INFO(c.hex);
  CHECK(Verdict(Unhex(c.hex)) == c.verdict);
}

TEST_CASE("Scan refuses reserved and indefinite heads", "[codec][cbor]") {
  const Case c = GENERATE(values<Case>({
      {"1c", "malformed-head"},
      {"1d", "malformed-head"},
      {"1e", "malformed-head"},
      {"3c", "malformed-head"},
      {"5d", "malformed-head"},
      {"7e", "malformed-head"},
      {"9c", "malformed-head"},
      {"1f", "indefinite-length"},
      {"3f", "indefinite-length"},
      {"5f", "indefinite-length"},
      {"7f", "indefinite-length"},
      {"9f00ff", "indefinite-length"},
  }));
  INFO(c.hex);
  CHECK(Verdict(Unhex(c.hex)) == c.verdict);
}

TEST_CASE("Scan allows majors 0 to 4 and four simple values only", "[codec][cbor]") {
  const Case c = GENERATE(values<Case>({
      {"a0", "unsupported-major"},
      {"bf", "unsupported-major"},
      {"a10000", "unsupported-major"},
      {"c000", "unsupported-major"},
      {"d818", "unsupported-major"},
      {"df", "unsupported-major"},
      {"f4", "ok"},
      {"f5", "ok"},
      {"f6", "ok"},
      {"f7", "unsupported-simple"},
      {"e0", "unsupported-simple"},
      {"f0", "unsupported-simple"},
      {"f820", "unsupported-simple"},
      {"f93c00", "unsupported-simple"},
      {"fa3f800000", "unsupported-simple"},
      {"fc", "unsupported-simple"},
      {"fd", "unsupported-simple"},
      {"fe", "unsupported-simple"},
      {"ff", "unsupported-simple"},
  }));
  INFO(c.hex);
  CHECK(Verdict(Unhex(c.hex)) == c.verdict);
}

TEST_CASE("Scan takes a float64 only for what an integer cannot hold", "[codec][cbor]") {
  const Case c = GENERATE(values<Case>({
      {"fb3ff8000000000000", "ok"},                   // 1.5
      {"fb3fe0000000000000", "ok"},                   // 0.5
      {"fb4008000000000000", "non-canonical-float"},  // 3.0
      {"fb0000000000000000", "non-canonical-float"},  // 0.0
      {"fb8000000000000000", "non-canonical-float"},  // -0.0
      {"fb4340000000000000", "non-canonical-float"},  // 2^53
      {"fbc340000000000000", "non-canonical-float"},  // -2^53
      {"fb433fffffffffffff", "non-canonical-float"},  // 2^53 - 1
      {"fb4340000000000001", "ok"},                   // 2^53 + 2
      {"fbc340000000000001", "ok"},                   // -2^53 - 2
      {"fb4360000000000000", "ok"},                   // 2^55
      {"fb0000000000000001", "ok"},                   // Smallest subnormal.
      {"fb7ff8000000000000", "non-finite-float"},     // NaN
      {"fbfff8000000000001", "non-finite-float"},     // Another NaN.
      {"fb7ff0000000000000", "non-finite-float"},     // Infinity
      {"fbfff0000000000000", "non-finite-float"},     // -Infinity
      {"fb3ff8", "truncated"},
  }));
  INFO(c.hex);
  CHECK(Verdict(Unhex(c.hex)) == c.verdict);
}

TEST_CASE("Scan wants exactly one whole item", "[codec][cbor]") {
  const Case c = GENERATE(values<Case>({
      {"", "truncated"},
      {"18", "truncated"},
      {"1901", "truncated"},
      {"1a000100", "truncated"},
      {"1b00000001000000", "truncated"},
      {"6261", "truncated"},
      {"43010203", "ok"},
      {"4401020300", "ok"},
      {"440102", "truncated"},
      {"81", "truncated"},
      {"8200", "truncated"},
      {"830000", "truncated"},
      {"8100", "ok"},
      {"80", "ok"},
      {"0000", "trailing-bytes"},
      {"8000", "trailing-bytes"},
      {"810000", "trailing-bytes"},
      {"f6f6", "trailing-bytes"},
  }));
  INFO(c.hex);
  CHECK(Verdict(Unhex(c.hex)) == c.verdict);
}

TEST_CASE("Scan refuses a ninth nested array before reading its length", "[codec][cbor]") {
  CHECK(Verdict(Unhex(Repeat("81", 8) + "00")) == "ok");
  CHECK(Verdict(Unhex(Repeat("81", 7) + "80")) == "ok");
  CHECK(Verdict(Unhex(Repeat("81", 8) + "1c")) == "malformed-head");
  CHECK(Verdict(Unhex(Repeat("81", 9) + "00")) == "nesting-too-deep");
  CHECK(Verdict(Unhex(Repeat("81", 8) + "80")) == "nesting-too-deep");
  CHECK(Verdict(Unhex(Repeat("81", 8) + "9f")) == "nesting-too-deep");
  CHECK(Verdict(Unhex(Repeat("81", 8) + "9c")) == "nesting-too-deep");
  CHECK(Verdict(Unhex(Repeat("81", 8) + "9bffffffffffffffff")) == "nesting-too-deep");
  CHECK(Verdict(Unhex(Repeat("81", 10) + "00")) == "nesting-too-deep");
  // Arrays that close make room again: two eight-deep branches side by side.
  const std::string branch = Repeat("81", 7) + "00";
  CHECK(Verdict(Unhex("82" + branch + branch)) == "ok");
  CHECK(Verdict(Unhex("83" + branch + "00" + branch)) == "ok");
  CHECK(Verdict(Unhex("82" + branch + "81" + branch)) == "nesting-too-deep");
}

TEST_CASE("Scan reports the first defect in byte order", "[codec][cbor]") {
  // One defect per fixture; with several, the one that comes first wins.
  CHECK(Verdict(Unhex("82181761ff")) == "non-canonical-integer");
  CHECK(Verdict(Unhex("8261ff1817")) == "invalid-utf8");
  CHECK(Verdict(Unhex("82a0f7")) == "unsupported-major");
  CHECK(Verdict(Unhex("8200fb7ff8000000000000")) == "non-finite-float");
  CHECK(Verdict(Unhex("8100001c")) == "trailing-bytes");
  CHECK(Verdict(Unhex("82181700")) == "non-canonical-integer");
  // An array's count is held against the bytes left as soon as it is read.
  CHECK(Verdict(Unhex("831817")) == "truncated");
  CHECK(Verdict(Unhex("1818ff")) == "trailing-bytes");
}

TEST_CASE("Scan takes only well-formed UTF-8 text", "[codec][cbor]") {
  const Case c = GENERATE(values<Case>({
      {"6161", "ok"},
      {"62c280", "ok"},      // U+0080
      {"62dfbf", "ok"},      // U+07FF
      {"63e0a080", "ok"},    // U+0800
      {"63ed9fbf", "ok"},    // U+D7FF
      {"63ee8080", "ok"},    // U+E000
      {"63efbbbf", "ok"},    // U+FEFF, kept as text.
      {"63efbfbf", "ok"},    // U+FFFF
      {"64f0908080", "ok"},  // U+10000
      {"64f09f9880", "ok"},  // U+1F600
      {"64f48fbfbf", "ok"},  // U+10FFFF
      {"6100", "ok"},        // U+0000 is a character.
      {"62c328", "invalid-utf8"},
      {"6180", "invalid-utf8"},            // A lone continuation byte.
      {"61c3", "invalid-utf8"},            // A sequence cut short.
      {"62c080", "invalid-utf8"},          // Overlong U+0000.
      {"62c1bf", "invalid-utf8"},          // Overlong U+007F.
      {"63e08080", "invalid-utf8"},        // Overlong.
      {"63e09fbf", "invalid-utf8"},        // Overlong U+07FF.
      {"64f08fbfbf", "invalid-utf8"},      // Overlong U+FFFF.
      {"63eda080", "invalid-utf8"},        // U+D800, a surrogate.
      {"63edbfbf", "invalid-utf8"},        // U+DFFF
      {"66eda0bdedb880", "invalid-utf8"},  // A surrogate pair, CESU style.
      {"64f4908080", "invalid-utf8"},      // U+110000
      {"64f5808080", "invalid-utf8"},
      {"65f888808080", "invalid-utf8"},  // Five-byte form.
      {"61fe", "invalid-utf8"},
      {"61ff", "invalid-utf8"},
      {"63e2823f", "invalid-utf8"},  // Bad third byte.
  }));
  INFO(c.hex);
  CHECK(Verdict(Unhex(c.hex)) == c.verdict);
}

TEST_CASE("CheckText tells an encoded surrogate from other bad UTF-8", "[codec][cbor]") {
  auto reason = [](std::string_view text) {
    auto checked = CheckText(text);
    return checked ? std::string("ok") : std::string(Name(checked.error().reason));
  };
  CHECK(reason("") == "ok");
  CHECK(reason("plain") == "ok");
  CHECK(reason("\xef\xbb\xbfkept") == "ok");
  CHECK(reason("\xf0\x9f\x94\x91") == "ok");
  CHECK(reason("a\xed\xa0\x80") == "lone-surrogate");
  CHECK(reason("\xed\xb0\x80z") == "lone-surrogate");
  CHECK(reason("\xed\xbf\xbf") == "lone-surrogate");
  CHECK(reason("\xed\xa0\xbd\xed\xb8\x80") == "lone-surrogate");
  CHECK(reason("\xed\xa0") == "invalid-utf8");
  CHECK(reason("\xc3\x28") == "invalid-utf8");
  CHECK(reason("\xc0\x80") == "invalid-utf8");
  CHECK(reason("\xf4\x90\x80\x80") == "invalid-utf8");
  CHECK(reason(std::string_view("\x80", 1)) == "invalid-utf8");
}

TEST_CASE("Writer writes numbers as integers when whole and within 2^53", "[codec][cbor]") {
  struct Number {
    double value;
    const char* hex;
  };
  const double two53 = 9007199254740992.0;
  const Number n = GENERATE_COPY(values<Number>({
      {0.0, "00"},
      {-0.0, "00"},
      {1.0, "01"},
      {23.0, "17"},
      {24.0, "1818"},
      {255.0, "18ff"},
      {256.0, "190100"},
      {65535.0, "19ffff"},
      {65536.0, "1a00010000"},
      {4294967295.0, "1affffffff"},
      {4294967296.0, "1b0000000100000000"},
      {two53 - 1, "1b001fffffffffffff"},
      {two53, "1b0020000000000000"},
      {two53 + 2, "fb4340000000000001"},
      {-1.0, "20"},
      {-24.0, "37"},
      {-25.0, "3818"},
      {-256.0, "38ff"},
      {-257.0, "390100"},
      {-two53, "3b001fffffffffffff"},
      {-two53 - 2, "fbc340000000000001"},
      {0.5, "fb3fe0000000000000"},
      {-0.5, "fbbfe0000000000000"},
      {1e-7, "fb3e7ad7f29abcaf48"},
      {1e300, "fb7e37e43c8800759c"},
      {36028797018963968.0, "fb4360000000000000"},
      {std::numeric_limits<double>::max(), "fb7fefffffffffffff"},
      {std::numeric_limits<double>::denorm_min(), "fb0000000000000001"},
  }));
  INFO(n.value);
  std::string out;
  Writer(out).Number(n.value);
  CHECK(Hex(out) == n.hex);
  REQUIRE(Scan(out).has_value());
  double back = -1;
  Reader reader(out);
  REQUIRE(reader.ReadNumber(back));
  CHECK(reader.done());
  CHECK(back == (n.value == 0 ? 0.0 : n.value));
  CHECK_FALSE(std::signbit(back) != std::signbit(n.value == 0 ? 0.0 : n.value));
}

TEST_CASE("Writer writes heads, text and bytes in their shortest form", "[codec][cbor]") {
  std::string out;
  Writer writer(out);
  writer.Array(2);
  writer.Text("hi");
  writer.Bytes(std::string(24, '\x01'));
  CHECK(Hex(out) ==
        "8262686958"
        "18" +
            Repeat("01", 24));
  out.clear();
  writer.Uint(uint64_t{1} << 53);
  writer.Head(1, 23);
  writer.Bool(true);
  writer.Bool(false);
  writer.Null();
  CHECK(Hex(out) == "1b002000000000000037f5f4f6");
}

TEST_CASE("Reader reads what Scan accepted and consumes nothing on a mismatch", "[codec][cbor]") {
  // [7, -3, "ab", h'01', true, null, [1, [2]], 0.5]
  const std::string bytes = Unhex(
      "8807226261624101f5f68201810"
      "2fb3fe0000000000000");
  REQUIRE(Scan(bytes).has_value());
  Reader in(bytes);
  uint64_t count = 0;
  REQUIRE(in.ReadArray(count));
  CHECK(count == 8);

  std::string_view text;
  CHECK_FALSE(in.ReadText(text));
  CHECK(in.Peek() == Reader::Type::kUint);
  int64_t integer = 0;
  REQUIRE(in.ReadInt(integer));
  CHECK(integer == 7);
  uint64_t unsigned_value = 0;
  CHECK_FALSE(in.ReadUint(unsigned_value));
  CHECK(in.Peek() == Reader::Type::kNegative);
  REQUIRE(in.ReadInt(integer));
  CHECK(integer == -3);
  REQUIRE(in.ReadText(text));
  CHECK(text == "ab");
  std::string_view bytes_item;
  REQUIRE(in.ReadBytes(bytes_item));
  CHECK(bytes_item == "\x01");
  bool flag = false;
  CHECK_FALSE(in.ReadNull());
  REQUIRE(in.ReadBool(flag));
  CHECK(flag);
  REQUIRE(in.ReadNull());
  CHECK(Hex(in.NextItem()) ==
        "820181"
        "02");
  in.Skip();
  CHECK(in.Peek() == Reader::Type::kFloat);
  double number = 0;
  REQUIRE(in.ReadNumber(number));
  CHECK(number == 0.5);
  CHECK(in.done());
  CHECK_FALSE(in.ReadNumber(number));
}

}  // namespace
}  // namespace aweft::codec
