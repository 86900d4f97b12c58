#include "sync/websocket.h"

#include <chrono>
#include <vector>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "sync/io_threads.h"
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

TEST_CASE("a link over a WebSocket on loopback shares and trades commits",
          "[sync][websocket]") {
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
  dialed->SendBinary("\x64open");  // The text "open": not a frame.
  REQUIRE(RunUntil(io, [&] { return client_closed; }));
  REQUIRE(RunUntil(io, [&] { return server_closed; }));
  CHECK(accepted->end_reason().rfind("bad-frame", 0) == 0);
}

TEST_CASE("accepted sockets on threads of their own carry links as on one thread",
          "[sync][websocket][threads]") {
  boost::asio::io_context io;
  AsioScheduler scheduler(io.get_executor());
  IoThreads threads(2);
  WebSocketChannel::Options options;
  options.socket_executor = [&] { return threads.Next(); };
  std::vector<std::unique_ptr<WebSocketChannel>> accepted;
  WebSocketListener listener(
      io.get_executor(), scheduler, "127.0.0.1", 0,
      [&](std::unique_ptr<WebSocketChannel> c) { accepted.push_back(std::move(c)); }, options);
  const std::string url = "ws://127.0.0.1:" + std::to_string(listener.port()) + "/";
  constexpr int kClients = 6, kWrites = 40;
  std::vector<std::unique_ptr<WebSocketChannel>> dialed;
  std::vector<std::unique_ptr<Link>> clients;
  std::vector<Shared*> shares;
  for (int i = 0; i < kClients; ++i) {
    dialed.push_back(WebSocketChannel::Dial(io.get_executor(), scheduler, url));
    clients.push_back(std::make_unique<Link>(*dialed.back(), scheduler));
    auto shared = clients.back()->Share("board", nullptr);
    REQUIRE(shared);
    shares.push_back(*shared);
  }
  REQUIRE(RunUntil(io, [&] { return accepted.size() == kClients; }));
  Document source(Kind::kObject);
  std::vector<std::unique_ptr<Link>> servers;
  for (auto& channel : accepted) {
    servers.push_back(std::make_unique<Link>(*channel, scheduler));
    REQUIRE(servers.back()->Share("board", &source));
  }
  REQUIRE(RunUntil(io, [&] {
    for (Shared* s : shares) if (!s->ready()) return false;
    return true;
  }));
  // Every client writes keys of its own; the server's links forward each to
  // the rest through the one document.
  for (int n = 0; n < kWrites; ++n) {
    for (int i = 0; i < kClients; ++i) {
      Document& copy = *shares[i]->document();
      REQUIRE(copy.Set(copy.root(), "k" + std::to_string(i) + "-" + std::to_string(n),
                       static_cast<double>(n)));
    }
  }
  const std::string want_keys = std::to_string(kClients * kWrites);
  REQUIRE(RunUntil(io, [&] {
    for (Shared* s : shares) {
      if (TakeSnapshot(*s->document()) != TakeSnapshot(source)) return false;
    }
    return source.root().Get("k0-" + std::to_string(kWrites - 1)) != nullptr &&
           source.root().Get("k" + std::to_string(kClients - 1) + "-" +
                             std::to_string(kWrites - 1)) != nullptr;
  }));
  for (auto& channel : accepted) {
    const auto traffic = channel->traffic();
    CHECK(traffic.bytes_in > 0);
    CHECK(traffic.bytes_out > 0);
  }
  // Text reaches the channel's thread. Each client names itself, which
  // pairs the accepted channels (in the order their handshakes ended) with
  // the dialed ones.
  std::vector<int> peer(kClients, -1);  // Dialed index -> accepted index.
  for (int j = 0; j < kClients; ++j) {
    accepted[j]->OnText([&, j](const std::string& t) { peer[std::stoi(t)] = j; });
  }
  for (int i = 0; i < kClients; ++i) dialed[i]->SendText(std::to_string(i));
  REQUIRE(RunUntil(io, [&] {
    for (int j : peer) if (j < 0) return false;
    return true;
  }));
  // Bytes that are no frame end the connection from the channel's thread,
  // and both ends hear it.
  WebSocketChannel& bad = *accepted[peer[0]];
  bool server_closed = false, client_closed = false;
  bad.Closed([&] { server_closed = true; });
  dialed[0]->Closed([&] { client_closed = true; });
  dialed[0]->SendBinary("\x64open");
  REQUIRE(RunUntil(io, [&] { return server_closed && client_closed; }));
  CHECK(bad.end_reason().rfind("bad-frame", 0) == 0);
  // A link closed by this end sends what it queued first.
  bool last_closed = false;
  dialed[1]->Closed([&] { last_closed = true; });
  Document& before = *shares[1]->document();
  REQUIRE(source.Set(source.root(), "last", true));
  servers[peer[1]]->Close();
  REQUIRE(RunUntil(io, [&] { return last_closed; }));
  CHECK(before.root().Get("last") != nullptr);
  // Channels destroyed while their sockets run elsewhere; then the threads.
  servers.clear();
  accepted.clear();
  REQUIRE(RunUntil(io, [&] {
    for (auto& channel : dialed) if (!channel->ended()) return false;
    return true;
  }));
  threads.Join();
}

TEST_CASE("a listener stopped while sockets open on other threads leaves nothing behind",
          "[sync][websocket][threads]") {
  boost::asio::io_context io;
  AsioScheduler scheduler(io.get_executor());
  auto threads = std::make_unique<IoThreads>(2);
  WebSocketChannel::Options options;
  options.socket_executor = [&] { return threads->Next(); };
  std::vector<std::unique_ptr<WebSocketChannel>> accepted;
  auto listener = std::make_unique<WebSocketListener>(
      io.get_executor(), scheduler, "127.0.0.1", 0,
      [&](std::unique_ptr<WebSocketChannel> c) { accepted.push_back(std::move(c)); }, options);
  const std::string url = "ws://127.0.0.1:" + std::to_string(listener->port()) + "/";
  constexpr size_t kClients = 20;
  std::vector<std::unique_ptr<WebSocketChannel>> dialed;
  for (size_t i = 0; i < kClients; ++i) {
    dialed.push_back(WebSocketChannel::Dial(io.get_executor(), scheduler, url));
  }
  // Stopped with some channels handed over and others still opening or on
  // their way; then the channels and the threads go, and only then does this
  // loop run what the threads posted to it.
  REQUIRE(RunUntil(io, [&] { return !accepted.empty(); }));
  listener.reset();
  const size_t handed = accepted.size();
  accepted.clear();
  threads.reset();
  REQUIRE(RunUntil(io, [&] {
    for (auto& channel : dialed) if (!channel->ended()) return false;
    return true;
  }));
  CHECK(accepted.empty());  // Nothing handed over after the stop.
  CHECK(handed >= 1);
}

}  // namespace
}  // namespace aweft::sync
