// codec/json.h: numbers read to the nearest double and written in their
// shortest exact text, over a million random doubles.

#include "codec/json.h"

#include <bit>
#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>

#include "tests/codec/doubles.h"

namespace aweft::codec {
namespace {

namespace json = boost::json;

json::value Parse(std::string_view text) {
  boost::system::error_code ec;
  json::value value = ParseJson(text, ec);
  INFO(text << ": " << ec.message());
  REQUIRE_FALSE(ec);
  return value;
}

uint64_t Bits(const json::value& value) { return std::bit_cast<uint64_t>(value.get_double()); }

TEST_CASE("ParseJson reads every number to the nearest double", "[codec][json]") {
  // Boost.JSON 1.81's own parse gives ...d62c, one unit in the last place off.
  CHECK(Bits(Parse("-1.5095366070022817e+241")) == 0xf2021c5bf116d62dull);
  CHECK(Bits(Parse("[0.1]").at(0)) == std::bit_cast<uint64_t>(0.1));
  CHECK(Bits(Parse("-0")) == std::bit_cast<uint64_t>(-0.0));
  CHECK(Bits(Parse("4.9406564584124654e-324")) == 1);
  CHECK(Bits(Parse("1e-400")) == 0);
  // Integers stay integers; one past 64 bits is the nearest double.
  CHECK(Parse("-9223372036854775808").get_int64() == INT64_MIN);
  CHECK(Parse("18446744073709551615").get_uint64() == UINT64_MAX);
  CHECK(Parse("18446744073709551616").get_double() == 18446744073709551616.0);
  // A number split across the parser's internal buffers is read whole.
  const std::string long_digits = "0." + std::string(600, '3') + "e1";
  CHECK(Parse(long_digits).get_double() == 3.3333333333333335);
}

TEST_CASE("ParseJson refuses what boost::json::parse refuses, and says where", "[codec][json]") {
  boost::system::error_code ec;
  size_t parsed = 0;
  CHECK(ParseJson("{\"a\": 1} x", ec, {}, &parsed).is_null());
  CHECK(ec == json::error::extra_data);
  CHECK(parsed == 9);
  CHECK(ParseJson("[1,", ec).is_null());
  CHECK(ec);
  json::parse_options shallow;
  shallow.max_depth = 2;
  ParseJson("[[[1]]]", ec, shallow);
  CHECK(ec == json::error::too_deep);
  CHECK(Parse("{\"k\":[true,null,\"t\"]}") == json::parse("{\"k\":[true,null,\"t\"]}"));
}

TEST_CASE("WriteJson writes doubles in JavaScript's shortest form", "[codec][json]") {
  CHECK(WriteJson(json::value(0.25)) == "0.25");
  CHECK(WriteJson(json::value(1e-7)) == "1e-7");
  CHECK(WriteJson(json::value(1e300)) == "1e+300");
  CHECK(WriteJson(json::value(-0.0)) == "-0");
  CHECK(WriteJson(json::array{1, "a\"b", nullptr}) == R"([1,"a\"b",null])");
  CHECK(WriteJson(json::value(std::numeric_limits<double>::infinity())) == "null");
}

TEST_CASE(
    "a million random doubles (a fiftieth under sanitizers) keep their bits through WriteJson and "
    "ParseJson",
    "[codec][json]") {
  const uint64_t seed = testing::SweepSeed();
  INFO("AWEFT_SEED=" << seed);
  size_t wrong = 0;
  for (double d : testing::RandomDoubles(testing::kSweepDoubles, seed)) {
    const std::string text = WriteJson(json::array{d});
    boost::system::error_code ec;
    const json::value back = ParseJson(text, ec);
    if (ec ||
        std::bit_cast<uint64_t>(back.at(0).to_number<double>()) != std::bit_cast<uint64_t>(d)) {
      if (++wrong <= 5) UNSCOPED_INFO(text << " read back wrong");
    }
  }
  CHECK(wrong == 0);
}

}  // namespace
}  // namespace aweft::codec
