#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "sync/asio_scheduler.h"
#include "sync/tcp.h"
#include "sync/websocket.h"

// Socket channels on loopback for tests: one io_context, one listener, and
// dialing it. The socket kinds are template arguments, so one test covers
// both.
namespace aweft::sync::testing {

struct WebSocketKind {
  using Channel = WebSocketChannel;
  using Listener = WebSocketListener;
  static std::unique_ptr<Channel> Dial(boost::asio::io_context& io, Scheduler& scheduler,
                                       uint16_t port) {
    return WebSocketChannel::Dial(io.get_executor(), scheduler,
                                  "ws://127.0.0.1:" + std::to_string(port) + "/");
  }
};

struct TcpKind {
  using Channel = TcpChannel;
  using Listener = TcpListener;
  static std::unique_ptr<Channel> Dial(boost::asio::io_context& io, Scheduler& scheduler,
                                       uint16_t port) {
    return TcpChannel::Dial(io.get_executor(), scheduler, "127.0.0.1", port);
  }
};

// Runs `io` one handler at a time until `done` holds or `limit` passes.
template <typename F>
bool RunUntil(boost::asio::io_context& io, F done,
              std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_one_for(std::chrono::milliseconds(5));
  }
  return done();
}

template <typename Kind>
class Loopback {
 public:
  using Channel = typename Kind::Channel;

  explicit Loopback(typename Channel::Options options = {})
      : scheduler(io.get_executor()),
        listener(
            io.get_executor(), scheduler, "127.0.0.1", 0,
            [this](std::unique_ptr<Channel> c) { accepted.push_back(std::move(c)); }, options) {}

  std::unique_ptr<Channel> Dial() { return Kind::Dial(io, scheduler, listener.port()); }

  // Dials, and waits for the accepting end: {dialed, accepted}.
  std::pair<std::unique_ptr<Channel>, std::unique_ptr<Channel>> Join() {
    auto dialed = Dial();
    if (!RunUntil(io, [&] { return !accepted.empty(); })) {
      return {std::move(dialed), nullptr};
    }
    auto far = std::move(accepted.front());
    accepted.pop_front();
    return {std::move(dialed), std::move(far)};
  }

  boost::asio::io_context io;
  AsioScheduler scheduler;
  std::deque<std::unique_ptr<Channel>> accepted;
  typename Kind::Listener listener;
};

}  // namespace aweft::sync::testing
