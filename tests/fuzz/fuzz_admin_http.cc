// Fuzzes the admin endpoint's request path with no socket: the input is what
// a client sends on one connection. It is fed with put() to the parser
// HttpServer reads with (detail::Bound, eager), and each request that
// parses is handled as HttpServer handles it (detail::FromBeast,
// Router::Handle, detail::ToBeast) by two routers over the tests' fake node
// (tests/admin/fake_source.h), one with no token and one with the token
// "s3cret". Requests follow one another while they keep the connection
// alive; a body over the limit is answered 413 (detail::TooLarge) and ends
// the connection, as in HttpServer. The limit here is 1 KiB, not the
// server's 64 MiB, so that inputs can reach it.
//
// Beyond "no crash, no sanitizer report", each response has a status Beast
// knows, from 100 to 599; a JSON one has a body that parses; and the
// response as written parses back as HTTP with the same status, the same
// headers and, but for HEAD, the same body.

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "admin/detail/http_message.h"
#include "admin/metrics.h"
#include "admin/router.h"
#include "tests/admin/fake_source.h"
#include "tests/fuzz/check.h"

namespace {

namespace admin = aweft::admin;
namespace detail = aweft::admin::detail;
namespace http = boost::beast::http;
namespace json = boost::json;
using aweft::fuzz::Fail;

constexpr size_t kMaxBody = 1 << 10;

// What the client reads back: the response as written, parsed again.
void CheckWritten(std::string_view input, const admin::Response& response,
                  const detail::BeastResponse& written, bool head) {
  std::ostringstream out;
  out << written;
  const std::string bytes = out.str();
  http::response_parser<http::string_body> parser;
  parser.eager(true);
  parser.skip(head);  // A HEAD response has a Content-Length but no body.
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(bytes), ec);
  if (ec || !parser.is_done()) {
    Fail(input, "a written response does not parse back",
         (ec ? ec.message() : "incomplete") + ": " + bytes);
  }
  const auto& back = parser.get();
  if (back.result_int() != static_cast<unsigned>(response.status)) {
    Fail(input, "a written response parses back with another status", bytes);
  }
  if (!head && back.body() != response.body) {
    Fail(input, "a written response parses back with another body", bytes);
  }
  if (back[http::field::content_type] != response.content_type) {
    Fail(input, "a written response parses back with another content type", bytes);
  }
  for (const auto& [name, value] : response.headers) {
    if (back[name] != value) Fail(input, "a written response lost a header", name + ": " + bytes);
  }
}

void CheckResponse(std::string_view input, const admin::Response& response, unsigned version,
                   bool head) {
  if (response.status < 100 || response.status > 599 ||
      http::int_to_status(static_cast<unsigned>(response.status)) == http::status::unknown) {
    Fail(input, "a response has a status HTTP does not know", std::to_string(response.status));
  }
  if (response.content_type.starts_with("application/json")) {
    boost::system::error_code ec;
    json::parse(response.body, ec);
    if (ec) {
      Fail(input, "a JSON response's body does not parse", ec.message() + ": " + response.body);
    }
  }
  CheckWritten(input, response, detail::ToBeast(response, version, head), head);
}

// Parses one request from the front of `rest`, taking what it read. False
// when none parsed (bad, incomplete or too large: the connection ends).
bool ReadRequest(std::string_view input, std::string_view& rest, detail::RequestParser& parser) {
  detail::Bound(parser, kMaxBody);
  parser.eager(true);
  boost::beast::error_code ec;
  while (!rest.empty() && !parser.is_done()) {
    const size_t used = parser.put(boost::asio::buffer(rest.data(), rest.size()), ec);
    rest.remove_prefix(used);
    if (ec == http::error::need_more && used > 0) continue;
    if (ec) break;
  }
  if (ec == http::error::body_limit) {
    CheckResponse(input, detail::TooLarge(kMaxBody), parser.get().version(), false);
    return false;
  }
  return !ec && parser.is_done();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  admin::testing::FakeSource source;
  admin::Metrics open_metrics, token_metrics;
  admin::Router open(source, open_metrics, "");
  admin::Router guarded(source, token_metrics, "s3cret");
  for (std::string_view rest = input; !rest.empty();) {
    detail::RequestParser parser;
    if (!ReadRequest(input, rest, parser)) break;
    const detail::BeastRequest& in = parser.get();
    const admin::Request request = detail::FromBeast(in);
    const bool head = in.method() == http::verb::head;
    CheckResponse(input, admin::Complete(open.Handle(request)), in.version(), head);
    CheckResponse(input, admin::Complete(guarded.Handle(request)), in.version(), head);
    if (!in.keep_alive()) break;
  }
  return 0;
}
