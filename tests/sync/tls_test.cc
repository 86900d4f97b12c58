// WebSocket links over TLS on loopback, with the self-signed certificates in
// tests/tls/ (CN localhost, names localhost and 127.0.0.1, valid to 2126).

#include "sync/tls.h"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "sync/link.h"
#include "sync/snapshot.h"
#include "sync/websocket.h"

namespace aweft::sync {
namespace {

const std::string kCert = AWEFT_TLS_DIR "/cert.pem";
const std::string kKey = AWEFT_TLS_DIR "/key.pem";
const std::string kOtherCert = AWEFT_TLS_DIR "/other-cert.pem";

bool RunUntil(boost::asio::io_context& io, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_for(std::chrono::milliseconds(5));
  }
  return done();
}

// A TLS listener and what it accepted.
struct TlsServer {
  explicit TlsServer(boost::asio::io_context& io)
      : scheduler(io.get_executor()),
        listener(
            io.get_executor(), scheduler, "127.0.0.1", 0,
            [this](std::unique_ptr<WebSocketChannel> c) { accepted = std::move(c); },
            [] {
              WebSocketChannel::Options options;
              options.tls = ServerTls(kCert, kKey);
              return options;
            }()) {}
  std::string url(const std::string& host = "127.0.0.1") const {
    return "wss://" + host + ":" + std::to_string(listener.port()) + "/";
  }
  AsioScheduler scheduler;
  std::unique_ptr<WebSocketChannel> accepted;
  WebSocketListener listener;
};

std::unique_ptr<WebSocketChannel> DialTrusting(boost::asio::io_context& io, Scheduler& scheduler,
                                               const std::string& url, const std::string& ca) {
  WebSocketChannel::Options options;
  options.tls = ClientTls(ca);
  return WebSocketChannel::Dial(io.get_executor(), scheduler, url, options);
}

TEST_CASE("a link over wss:// on loopback shares and trades commits", "[sync][tls]") {
  boost::asio::io_context io;
  TlsServer server(io);
  // By address and by name: the certificate names both.
  for (const std::string host : {"127.0.0.1", "localhost"}) {
    server.accepted.reset();
    auto dialed = DialTrusting(io, server.scheduler, server.url(host), kCert);
    Link client(*dialed, server.scheduler);
    Document source(Kind::kObject);
    REQUIRE(source.Set(source.root(), "title", std::string("plan")));
    auto shared = client.Share("board", nullptr);
    REQUIRE(shared);
    REQUIRE(RunUntil(io, [&] { return server.accepted != nullptr; }));
    Link peer(*server.accepted, server.scheduler);
    REQUIRE(peer.Share("board", &source));
    REQUIRE(RunUntil(io, [&] { return (*shared)->ready(); }));
    Document& copy = *(*shared)->document();
    REQUIRE(copy.Set(copy.root(), "done", true));
    REQUIRE(RunUntil(io, [&] { return source.root().Get("done") != nullptr; }));
    CHECK(TakeSnapshot(copy) == TakeSnapshot(source));
    CHECK(dialed->traffic().bytes_in > 0);
  }
}

TEST_CASE(
    "a wss:// dial refuses a certificate it does not trust, and plain ws:// to a TLS "
    "port fails",
    "[sync][tls][refusal]") {
  boost::asio::io_context io;
  TlsServer server(io);
  SECTION("another self-signed certificate is trusted, not this one") {
    auto dialed = DialTrusting(io, server.scheduler, server.url(), kOtherCert);
    REQUIRE(RunUntil(io, [&] { return dialed->ended(); }));
    REQUIRE(dialed->end_reason());
    CHECK(dialed->end_reason()->reason == codec::Reason::kClosed);
    CHECK(dialed->end_reason()->message.find("TLS handshake") != std::string::npos);
    CHECK(dialed->end_reason()->message.find("certificate verify failed") != std::string::npos);
  }
  SECTION("the system's store does not hold a self-signed certificate") {
    auto dialed = WebSocketChannel::Dial(io.get_executor(), server.scheduler, server.url());
    REQUIRE(RunUntil(io, [&] { return dialed->ended(); }));
    REQUIRE(dialed->end_reason());
    CHECK(dialed->end_reason()->reason == codec::Reason::kClosed);
    CHECK(dialed->end_reason()->message.find("certificate verify failed") != std::string::npos);
  }
  SECTION("plain WebSocket to the TLS port") {
    auto dialed =
        WebSocketChannel::Dial(io.get_executor(), server.scheduler,
                               "ws://127.0.0.1:" + std::to_string(server.listener.port()) + "/");
    REQUIRE(RunUntil(io, [&] { return dialed->ended(); }));
    REQUIRE(dialed->end_reason());
    CHECK(dialed->end_reason()->reason == codec::Reason::kClosed);
    CHECK(dialed->end_reason()->message.find("handshake") != std::string::npos);
  }
  CHECK(server.accepted == nullptr);
}

TEST_CASE("unreadable or mismatched TLS files are refused with the file and the fix",
          "[sync][tls][refusal]") {
  CHECK_THROWS_WITH(ServerTls("/nonexistent/cert.pem", kKey),
                    Catch::Contains("/nonexistent/cert.pem") && Catch::Contains("tls.cert_file"));
  CHECK_THROWS_WITH(ServerTls(kOtherCert, kKey),
                    Catch::Contains("cannot use private key") && Catch::Contains("tls.key_file"));
  CHECK_THROWS_WITH(ClientTls("/nonexistent/ca.pem"),
                    Catch::Contains("/nonexistent/ca.pem") && Catch::Contains("tls.ca_file"));
  CHECK_NOTHROW(ServerTls(kCert, kKey));
}

}  // namespace
}  // namespace aweft::sync
