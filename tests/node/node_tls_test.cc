// aweft-node serving TLS: wss:// links (clients and a node below), https://
// admin, with the self-signed certificate in tests/tls/.

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <string>

#include "admin/http_client.h"
#include "node/client.h"
#include "sync/snapshot.h"
#include "sync/tls.h"
#include "tests/node/node_process.h"

namespace aweft::node::testing {
namespace {

const std::string kCert = AWEFT_TLS_DIR "/cert.pem";
const std::string kKey = AWEFT_TLS_DIR "/key.pem";

TEST_CASE("a node serves wss:// links and https:// admin, and a node below dials it over TLS",
          "[node][tls]") {
  TempDir dir;
  NodeProcess top(dir.path() + "/top", {"--tls-cert", kCert, "--tls-key", kKey});
  top.Start();
  REQUIRE(top.url().rfind("wss://", 0) == 0);
  REQUIRE(top.admin_url().rfind("https://", 0) == 0);
  NodeProcess below(dir.path() + "/below", {"--upstream", top.url(), "--tls-ca", kCert});
  below.Start();

  boost::asio::io_context io;
  aweft::Client::Options secure;
  secure.url = top.url();
  secure.tls = sync::ClientTls(kCert);
  aweft::Client writer(io.get_executor(), secure);
  sync::Document board(codec::Kind::kObject);
  REQUIRE(board.Set(board.root(), "title", std::string("over tls")));
  REQUIRE(writer.Share("board", board));
  REQUIRE(RunUntil(
      io, [&] { return writer.connected() && writer.unconfirmed("board") == 0; },
      std::chrono::milliseconds(10000)));

  // A plain client of the node below gets it from above, over the TLS link.
  aweft::Client::Options plain;
  plain.url = below.url();
  aweft::Client reader(io.get_executor(), plain);
  sync::Document* copy = nullptr;
  reader.Open("board", [&](sync::Document& d) { copy = &d; });
  REQUIRE(RunUntil(
      io, [&] { return copy != nullptr; }, std::chrono::milliseconds(10000)));
  REQUIRE(copy->Set(copy->root(), "seen", true));
  REQUIRE(RunUntil(
      io, [&] { return board.root().Get("seen") != nullptr; }, std::chrono::milliseconds(10000)));
  // One state at both ends (the title may still be on its way down).
  CHECK(RunUntil(io, [&] { return sync::TakeSnapshot(board) == sync::TakeSnapshot(*copy); }));

  // The admin endpoint over https://, trusting the certificate.
  setenv("SSL_CERT_FILE", kCert.c_str(), 1);
  const admin::HttpReply health = admin::HttpRequest(top.admin_url(), "GET", "/health");
  CHECK(health.status == 200);
  const admin::HttpReply doc = admin::HttpRequest(top.admin_url(), "GET", "/v1/documents/board");
  CHECK(doc.status == 200);
  CHECK(doc.body.find("over tls") != std::string::npos);
  // Plain HTTP to it gets no answer.
  CHECK_THROWS_AS(admin::HttpRequest("http://127.0.0.1:" + std::to_string(top.admin_port()), "GET",
                                     "/health", "", "", std::chrono::milliseconds(2000)),
                  admin::HttpError);
}

TEST_CASE("a node refuses to start with TLS files it cannot use, saying which and how to fix",
          "[node][tls][refusal]") {
  TempDir dir;
  NodeProcess half(dir.path() + "/half", {"--tls-cert", kCert});
  CHECK_THROWS(half.Start());
  CHECK(WEXITSTATUS(half.Wait()) == 2);
  NodeProcess missing(dir.path() + "/missing",
                      {"--tls-cert", "/nonexistent.pem", "--tls-key", kKey});
  CHECK_THROWS(missing.Start());
  CHECK(WEXITSTATUS(missing.Wait()) == 2);
}

}  // namespace
}  // namespace aweft::node::testing
