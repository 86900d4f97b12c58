#pragma once

// A TCP proxy in front of a node, for tests that cut links between nodes.

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <memory>
#include <set>
#include <string>
#include <tuple>

namespace aweft::node::testing {

// A TCP proxy in front of one node, on the test's loop. Cut() closes every
// connection through it and refuses new ones, accepting and closing them,
// until Restore().
class LinkProxy {
  using tcp = boost::asio::ip::tcp;
  static constexpr auto kNoThrow = boost::asio::as_tuple(boost::asio::use_awaitable);

 public:
  LinkProxy(boost::asio::io_context& io, uint16_t target)
      : io_(io),
        target_(boost::asio::ip::make_address_v4("127.0.0.1"), target),
        acceptor_(io, tcp::endpoint(boost::asio::ip::make_address_v4("127.0.0.1"), 0)) {
    boost::asio::co_spawn(io_, Accept(), boost::asio::detached);
  }
  // Coroutines still waiting are destroyed with the loop, never resumed:
  // the test runs the loop no more once its proxies are gone.
  ~LinkProxy() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    CloseAll();
  }
  LinkProxy(const LinkProxy&) = delete;
  LinkProxy& operator=(const LinkProxy&) = delete;

  std::string url() const {
    return "ws://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()) + "/";
  }
  void Cut() {
    cut_ = true;
    CloseAll();
  }
  void Restore() { cut_ = false; }

 private:
  struct Pair {
    explicit Pair(tcp::socket from) : down(std::move(from)), up(down.get_executor()) {}
    tcp::socket down;  // From the node that dials.
    tcp::socket up;    // To the node above.
  };

  boost::asio::awaitable<void> Accept() {
    while (acceptor_.is_open()) {
      auto [ec, socket] = co_await acceptor_.async_accept(kNoThrow);
      if (ec || cut_) continue;  // A refused one closes as `socket` goes.
      boost::asio::co_spawn(io_, Serve(std::make_shared<Pair>(std::move(socket))),
                            boost::asio::detached);
    }
  }

  boost::asio::awaitable<void> Serve(std::shared_ptr<Pair> pair) {
    pairs_.insert(pair);
    // A cut while connecting closes `up`, which ends the connect.
    auto [ec] = co_await pair->up.async_connect(target_, kNoThrow);
    if (ec || !pairs_.count(pair)) {
      Close(pair);
      co_return;
    }
    boost::asio::co_spawn(io_, Pump(pair, pair->down, pair->up), boost::asio::detached);
    co_await Pump(pair, pair->up, pair->down);
  }

  // Relays `from` to `to` until either ends, then ends both.
  boost::asio::awaitable<void> Pump(std::shared_ptr<Pair> pair, tcp::socket& from,
                                    tcp::socket& to) {
    std::array<char, 16384> buffer;
    for (;;) {
      auto [read, n] = co_await from.async_read_some(boost::asio::buffer(buffer), kNoThrow);
      if (read) break;
      if (std::get<0>(co_await boost::asio::async_write(to, boost::asio::buffer(buffer.data(), n),
                                                        kNoThrow))) {
        break;
      }
    }
    Close(pair);
  }

  void Close(const std::shared_ptr<Pair>& pair) {
    boost::system::error_code ignored;
    pair->down.close(ignored);
    pair->up.close(ignored);
    pairs_.erase(pair);
  }
  void CloseAll() {
    auto all = std::move(pairs_);
    pairs_.clear();
    for (const auto& pair : all) Close(pair);
  }

  boost::asio::io_context& io_;
  const tcp::endpoint target_;
  tcp::acceptor acceptor_;
  std::set<std::shared_ptr<Pair>> pairs_;
  bool cut_ = false;
};

}  // namespace aweft::node::testing
