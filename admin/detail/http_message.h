#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>

#include "admin/router.h"

// Between Boost.Beast's messages and the router's: what HttpServer does to
// each request it reads, apart from the reading and writing. Here so that a
// test (tests/fuzz/fuzz_admin_http.cc) can run the same steps with no socket.
namespace aweft::admin::detail {

namespace http = boost::beast::http;

using BeastRequest = http::request<http::string_body>;
using BeastResponse = http::response<http::string_body>;
using RequestParser = http::request_parser<http::string_body>;

// Bounds `parser` as every request is read: headers up to 64 KiB, the body
// up to `max_body`.
void Bound(RequestParser& parser, size_t max_body);

// The router's view of a parsed request.
Request FromBeast(const BeastRequest& in);

// The response to write for `out`. With `head` the body is dropped but
// Content-Length stays that of the GET.
BeastResponse ToBeast(Response out, unsigned version, bool head);

// The answer to a request whose body is over `max_body` bytes (413).
Response TooLarge(size_t max_body);

}  // namespace aweft::admin::detail
