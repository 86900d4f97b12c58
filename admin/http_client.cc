#include "admin/http_client.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>
#include <optional>

namespace aweft::admin {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

// What went wrong, said for a person: a timeout as such, a certificate
// that is not trusted with the way to trust it.
[[noreturn]] void Fail(const std::string& what, const beast::error_code& ec, SSL* tls = nullptr) {
  if (ec == beast::error::timeout) throw HttpError("timed out " + what);
  if (tls) {
    const long verify = SSL_get_verify_result(tls);
    if (verify != X509_V_OK) {
      throw HttpError(what + ": " + X509_verify_cert_error_string(verify) +
                      ". Trust its certificate: SSL_CERT_FILE=FILE");
    }
  }
  throw HttpError(what + ": " + ec.message());
}

// Runs the operation `start` begins on `io` to its end; its error.
template <class Start>
beast::error_code Run(asio::io_context& io, Start start) {
  beast::error_code result;
  start([&](beast::error_code ec, auto&&...) { result = ec; });
  io.restart();
  io.run();
  return result;
}

// Sends `request` over `stream` and reads the answer, whatever its framing
// (length, chunks, or the end of the stream), its body unbounded.
template <class Stream>
HttpReply Exchange(asio::io_context& io, Stream& stream, http::request<http::string_body>& request,
                   const std::string& where, SSL* tls = nullptr) {
  if (auto ec = Run(io, [&](auto done) { http::async_write(stream, request, done); })) {
    Fail("sending to " + where, ec, tls);
  }
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);
  if (auto ec = Run(io, [&](auto done) { http::async_read(stream, buffer, parser, done); })) {
    if (ec == http::error::bad_version || ec == http::error::bad_status ||
        ec == http::error::bad_line_ending || ec == http::error::bad_field) {
      throw HttpError("the answer from " + where + " is not HTTP");
    }
    Fail("waiting for " + where, ec, tls);
  }
  http::response<http::string_body> response = parser.release();
  HttpReply reply;
  reply.status = static_cast<int>(response.result_int());
  reply.content_type = std::string(response[http::field::content_type]);
  for (const auto& field : response) {
    if (!reply.headers.empty()) reply.headers += "\r\n";
    reply.headers += std::string(field.name_string()) + ": " + std::string(field.value());
  }
  reply.body = std::move(response.body());
  return reply;
}

// A client context: TLS 1.2 or later, the server's certificate checked
// against the system's store (or the PEM file SSL_CERT_FILE names).
ssl::context& ClientContext() {
  static ssl::context* const context = [] {
    auto* c = new ssl::context(ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(c->native_handle(), TLS1_2_VERSION);
    c->set_default_verify_paths();
    c->set_verify_mode(ssl::verify_peer);
    SSL_CTX_set_options(c->native_handle(), SSL_OP_IGNORE_UNEXPECTED_EOF);
    return c;
  }();
  return *context;
}

}  // namespace

std::string PathEncode(const std::string& text) {
  return boost::urls::encode(text, boost::urls::unreserved_chars);
}

HttpReply HttpRequest(const std::string& base, const std::string& method, const std::string& target,
                      const std::string& token, const std::string& body,
                      std::chrono::milliseconds timeout) {
  auto url = boost::urls::parse_uri(base);
  const bool tls = url && url->scheme() == "https";
  if (!url || (!tls && url->scheme() != "http") || url->host().empty()) {
    throw HttpError("'" + base + "' is not an http:// or https:// URL");
  }
  const std::string host = url->host_address();  // An IPv6 address without its brackets.
  const std::string port = url->has_port() ? std::string(url->port()) : tls ? "443" : "80";
  const std::string where = std::string(url->encoded_host_and_port());

  asio::io_context io;
  beast::tcp_stream stream(io);
  stream.expires_after(timeout);  // Every step below counts against it.
  beast::error_code ec;
  const auto endpoints = tcp::resolver(io).resolve(host, port, ec);
  if (ec) throw HttpError("cannot resolve " + host + ": " + ec.message());
  if (auto failed = Run(io, [&](auto done) { stream.async_connect(endpoints, done); })) {
    Fail("cannot connect to " + where, failed);
  }

  http::request<http::string_body> request;
  const http::verb verb = http::string_to_verb(method);
  if (verb == http::verb::unknown) {
    request.method_string(method);
  } else {
    request.method(verb);
  }
  request.target(target);
  request.version(11);
  request.set(http::field::host, where);
  request.set(http::field::user_agent, "aweftctl");
  request.keep_alive(false);
  if (!token.empty()) request.set(http::field::authorization, "Bearer " + token);
  if (!body.empty() || method == "PUT" || method == "POST") {
    request.set(http::field::content_type, "application/json");
    request.body() = body;
  }
  request.prepare_payload();
  if (!tls) return Exchange(io, stream, request, where);

  ssl::stream<beast::tcp_stream> secure(std::move(stream), ClientContext());
  SSL* handle = secure.native_handle();
  boost::system::error_code not_ip;
  asio::ip::make_address(host, not_ip);
  if (!not_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(handle), host.c_str());
  } else {
    SSL_set_tlsext_host_name(handle, host.c_str());
    SSL_set1_host(handle, host.c_str());
  }
  if (auto failed =
          Run(io, [&](auto done) { secure.async_handshake(ssl::stream_base::client, done); })) {
    Fail("the TLS handshake with " + where, failed, handle);
  }
  return Exchange(io, secure, request, where, handle);
}

}  // namespace aweft::admin
