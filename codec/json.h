#pragma once

#include <boost/json/parse_options.hpp>
#include <boost/json/value.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <string>
#include <string_view>

// JSON text, read and written exactly: the one parser and the one writer of
// every JSON path in the project (aweftctl, the admin endpoint, requests).
// A separate library (aweft::json) so that aweft::codec keeps to the
// standard library.
namespace aweft::codec {

// Parses one JSON text, as boost::json::parse does, except for numbers:
// each number with a fraction or an exponent, and each integer too large for
// 64 bits, is the double nearest to its text (std::from_chars, correctly
// rounded). Boost.JSON 1.81's own conversion is not: it reads
// -1.5095366070022817e+241 one unit in the last place off. "-0" is the
// double -0.0, as in JavaScript. On failure `ec` is set, `*parsed` (when
// given) holds how many bytes were read, and the result is null.
boost::json::value ParseJson(std::string_view text, boost::system::error_code& ec,
                             const boost::json::parse_options& options = {},
                             size_t* parsed = nullptr);

// Writes `json` on one line. Every double is written in its shortest text
// that reads back to the same bits, in JavaScript's style (0.25, 1e-7,
// 1e+300), where boost::json::serialize writes 2.5E-1. A non-finite double,
// which JSON cannot spell, is written as null.
std::string WriteJson(const boost::json::value& json);

}  // namespace aweft::codec
