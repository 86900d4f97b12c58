#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

// A small blocking HTTP/1.1 client for the admin endpoint (aweftctl and the
// tests): Boost.Beast, one request per connection, over TLS (OpenSSL) for
// https:// URLs; an answer framed by its length, by chunks or by the end of
// the stream is read whole.
namespace aweft::admin {

// The request could not be made or its answer not read.
class HttpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct HttpReply {
  int status = 0;
  std::string content_type;
  std::string body;
  std::string headers;  // The header lines, "Name: value" joined by CRLF, for tests.
};

// Sends `method` `target` (path and query, already encoded) to `base`
// ("http://host:port" or "https://host:port"; the server's certificate is
// checked against the system's store, or the PEM file SSL_CERT_FILE names),
// with `token` as a bearer token when not empty and
// `body` as JSON when not empty. Throws HttpError for a bad `base`, a
// connection that fails or an answer that is not HTTP, or after `timeout`.
HttpReply HttpRequest(const std::string& base, const std::string& method, const std::string& target,
                      const std::string& token = "", const std::string& body = "",
                      std::chrono::milliseconds timeout = std::chrono::seconds(30));

// Percent-encodes everything but unreserved characters (RFC 3986), so a
// document name can be one path segment.
std::string PathEncode(const std::string& text);

}  // namespace aweft::admin
