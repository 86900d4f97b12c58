#include "codec/json.h"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/error.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value_stack.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

namespace aweft::codec {
namespace {

namespace json = boost::json;
using boost::system::error_code;

// Builds values as boost::json::parser's own handler does, but reads each
// double from its text. The parser hands a number's text over in parts when
// it spans two writes: `number_` gathers them.
class ExactHandler {
 public:
  static constexpr size_t max_object_size = json::object::max_size();
  static constexpr size_t max_array_size = json::array::max_size();
  static constexpr size_t max_key_size = json::string::max_size();
  static constexpr size_t max_string_size = json::string::max_size();

  json::value_stack stack;

  bool on_document_begin(error_code&) { return true; }
  bool on_document_end(error_code&) { return true; }
  bool on_object_begin(error_code&) { return true; }
  bool on_object_end(size_t n, error_code&) { return stack.push_object(n), true; }
  bool on_array_begin(error_code&) { return true; }
  bool on_array_end(size_t n, error_code&) { return stack.push_array(n), true; }
  bool on_key_part(json::string_view s, size_t, error_code&) { return stack.push_chars(s), true; }
  bool on_key(json::string_view s, size_t, error_code&) { return stack.push_key(s), true; }
  bool on_string_part(json::string_view s, size_t, error_code&) {
    return stack.push_chars(s), true;
  }
  bool on_string(json::string_view s, size_t, error_code&) { return stack.push_string(s), true; }
  bool on_number_part(json::string_view s, error_code&) {
    number_.append(s.data(), s.size());
    return true;
  }
  bool on_int64(int64_t i, json::string_view s, error_code&) {
    const bool negative_zero = i == 0 && Text(s).front() == '-';
    number_.clear();
    if (negative_zero) return stack.push_double(-0.0), true;
    return stack.push_int64(i), true;
  }
  bool on_uint64(uint64_t u, json::string_view, error_code&) {
    number_.clear();
    return stack.push_uint64(u), true;
  }
  bool on_double(double rough, json::string_view s, error_code&) {
    const std::string_view text = Text(s);
    double exact = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), exact);
    // Out of range: past the largest double (Boost's reading is the
    // infinity, which no codec value holds) or below the smallest (zero).
    if (ec != std::errc() || end != text.data() + text.size()) exact = rough;
    number_.clear();
    return stack.push_double(exact), true;
  }
  bool on_bool(bool b, error_code&) { return stack.push_bool(b), true; }
  bool on_null(error_code&) { return stack.push_null(), true; }
  bool on_comment_part(json::string_view, error_code&) { return true; }
  bool on_comment(json::string_view, error_code&) { return true; }

 private:
  // The whole text of the number whose last part is `last`.
  std::string_view Text(json::string_view last) {
    if (number_.empty()) return {last.data(), last.size()};
    number_.append(last.data(), last.size());
    return number_;
  }

  std::string number_;
};

// std::to_chars gives the shortest round-trip digits; JavaScript then drops
// the exponent's leading zeros (1e-07 -> 1e-7), and so do we.
void AppendDouble(double number, std::string& out) {
  char buffer[64];
  const size_t start = out.size();
  out.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, number).ptr);
  if (size_t e = out.find('e', start); e != std::string::npos) {
    size_t zero = e + 2;  // After the sign.
    while (zero + 1 < out.size() && out[zero] == '0') out.erase(zero, 1);
  }
}

void Append(const json::value& json, std::string& out) {
  switch (json.kind()) {
    case json::kind::double_:
      if (!std::isfinite(json.get_double())) {
        out += "null";
      } else {
        AppendDouble(json.get_double(), out);
      }
      return;
    case json::kind::array: {
      out += '[';
      const char* comma = "";
      for (const json::value& item : json.get_array()) {
        out += std::exchange(comma, ",");
        Append(item, out);
      }
      out += ']';
      return;
    }
    case json::kind::object: {
      out += '{';
      const char* comma = "";
      for (const auto& entry : json.get_object()) {
        out += std::exchange(comma, ",");
        out += json::serialize(entry.key());
        out += ':';
        Append(entry.value(), out);
      }
      out += '}';
      return;
    }
    default:
      out += json::serialize(json);
      return;
  }
}

}  // namespace

json::value ParseJson(std::string_view text, error_code& ec, const json::parse_options& options,
                      size_t* parsed) {
  json::basic_parser<ExactHandler> parser(options);
  parser.handler().stack.reset();
  const size_t n = parser.write_some(false, text.data(), text.size(), ec);
  if (!ec && n < text.size()) ec = json::error::extra_data;
  if (parsed != nullptr) *parsed = n;
  if (ec) return nullptr;
  return parser.handler().stack.release();
}

std::string WriteJson(const json::value& json) {
  std::string out;
  Append(json, out);
  return out;
}

}  // namespace aweft::codec
