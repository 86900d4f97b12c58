#include "sync/websocket.h"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "sync/link.h"
#include "sync/snapshot.h"

namespace aweft::sync {
namespace {

// Runs the loop until `done` holds or two seconds pass.
template <typename F>
bool RunUntil(boost::asio::io_context& io, F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_for(std::chrono::milliseconds(5));
  }
  return done();
}

TEST_CASE("a link over a WebSocket on loopback shares and trades commits", "[sync][websocket]") {
  boost::asio::io_context io;
  AsioScheduler scheduler(io.get_executor());
  std::unique_ptr<WebSocketChannel> accepted;
  WebSocketListener listener(io.get_executor(), scheduler, "127.0.0.1", 0,
                             [&](std::unique_ptr<WebSocketChannel> c) { accepted = std::move(c); });
  auto dialed = WebSocketChannel::Dial(io.get_executor(), scheduler,
                                       "ws://127.0.0.1:" + std::to_string(listener.port()) + "/");
  Link client(*dialed, scheduler);
  Document source(Kind::kObject);
  REQUIRE(source.Set(source.root(), "title", std::string("plan")));
  auto shared = client.Share("board", nullptr);  // Sent while connecting: held.
  REQUIRE(shared);
  REQUIRE(RunUntil(io, [&] { return accepted != nullptr; }));
  Link server(*accepted, scheduler);
  REQUIRE(server.Share("board", &source));
  REQUIRE(RunUntil(io, [&] { return (*shared)->ready(); }));
  Document& copy = *(*shared)->document();
  CHECK(TakeSnapshot(copy) == TakeSnapshot(source));
  REQUIRE(copy.Set(copy.root(), "done", true));
  REQUIRE(RunUntil(io, [&] { return source.root().Get("done") != nullptr; }));
  CHECK(TakeSnapshot(copy) == TakeSnapshot(source));
}

TEST_CASE("undecodable bytes end the WebSocket channel, not the process",
          "[sync][websocket][refusal]") {
  boost::asio::io_context io;
  AsioScheduler scheduler(io.get_executor());
  std::unique_ptr<WebSocketChannel> accepted;
  WebSocketListener listener(io.get_executor(), scheduler, "127.0.0.1", 0,
                             [&](std::unique_ptr<WebSocketChannel> c) { accepted = std::move(c); });
  auto dialed = WebSocketChannel::Dial(io.get_executor(), scheduler,
                                       "ws://127.0.0.1:" + std::to_string(listener.port()) + "/");
  REQUIRE(RunUntil(io, [&] { return accepted != nullptr; }));
  bool server_closed = false, client_closed = false;
  accepted->Closed([&] { server_closed = true; });
  dialed->Closed([&] { client_closed = true; });
  std::string text;
  accepted->OnText([&](const std::string& t) { text = t; });
  dialed->SendText("{\"id\":1,\"name\":\"hello\"}");
  REQUIRE(RunUntil(io, [&] { return !text.empty(); }));  // Text passes by.
  dialed->SendBinary("\x64open");                        // The text "open": not a frame.
  REQUIRE(RunUntil(io, [&] { return client_closed; }));
  REQUIRE(RunUntil(io, [&] { return server_closed; }));
  REQUIRE(accepted->end_reason());
  CHECK(accepted->end_reason()->reason == codec::Reason::kBadFrame);
}

}  // namespace
}  // namespace aweft::sync
