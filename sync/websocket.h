#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "sync/asio_scheduler.h"
#include "sync/budget.h"
#include "sync/channel.h"

namespace boost::asio::ssl {
class context;
}

namespace aweft::sync {

// A channel over one WebSocket connection (Boost.Beast), for the dialing and
// the accepting end alike. Frames travel as binary messages; text messages
// are handed to the text handler (for `requests`), so both share one socket.
// Frames sent while the connection is still opening are held and sent, in
// order, once it is open. Bytes that do not decode as a frame end the
// channel and close the socket; they never reach the process.
// The channel and its socket live on one thread: the executor it was dialed
// with, or, for an accepted one, the listener's (or where `place` put it),
// which its scheduler runs work on.
class WebSocketChannel : public TextChannel {
 public:
  struct Options {
    // The largest message read. Default: 16 MiB.
    size_t max_message = 16 << 20;
    // Dialing: sent as `Authorization: Bearer <bearer>` when not empty.
    // Default: empty.
    std::string bearer;
    // The most bytes handed to the channel and not yet written to the
    // socket. Past it the other end is reading too slowly: what is unsent
    // is dropped, a fault `limit` is sent in its place, and the connection
    // closes (at once if that fault is not taken within 5 s). It bounds the
    // backlog: one message larger than it at a time (up to max_message) is
    // not counted. 0: no bound. Default: 8 MiB.
    size_t max_queued_bytes = 8 << 20;
    // With nothing arriving for half of it, a ping is sent; with nothing,
    // not even the pong, for all of it, the connection ends (idle or half
    // open). 0: never. Default: 60 s.
    std::chrono::seconds idle_timeout{60};
    // The time one message may take to arrive, from its first byte to its
    // last; past it the connection ends with a fault `limit` (a peer
    // trickling a large message holds its bytes, and is not idle). 0: no
    // bound. Default: 0.
    std::chrono::seconds message_timeout{0};
    // What every connection sharing it holds, partial messages read and
    // messages waiting to be sent, is bounded together (sync/budget.h); the
    // largest are cut with a fault `limit` when the total passes it. Null:
    // no bound but each connection's own. Default: null.
    std::shared_ptr<MemoryBudget> budget;
    // The largest text message taken; a larger one ends the connection
    // with a fault `limit`. 0: up to max_message. Default: 0.
    size_t max_text = 0;
    // TLS (sync/tls.h). Dialing: what a wss:// URL's certificate is checked
    // against (a ClientTls context); null: the system's trusted
    // certificates. Listening: when set (a ServerTls context), every
    // connection is TLS (wss://). Default: null.
    std::shared_ptr<boost::asio::ssl::context> tls;
    // Listening: where each accepted connection runs, socket and channel
    // both: an executor, and the scheduler the channel delivers on, which
    // runs work on that executor's thread. on_channel is then called on that
    // thread. Empty: the listener's own. Default: empty.
    std::function<std::pair<boost::asio::any_io_executor, Scheduler*>()> place;
    // Listening: the most connections open at once, in their handshake or
    // served; one more is closed as soon as it is accepted. 0: no bound.
    // Default: 0.
    size_t max_connections = 0;
    // Listening: told, on the listener's thread, of `count` connections
    // closed unserved as they were accepted: past max_connections (`full`
    // true), or with the process out of descriptors (false). Default: none.
    std::function<void(bool full, size_t count)> on_shed;
  };

  // Dials `url` (ws://host:port/path, or wss:// for TLS).
  static std::unique_ptr<WebSocketChannel> Dial(boost::asio::any_io_executor executor,
                                                Scheduler& scheduler, const std::string& url,
                                                Options options);
  static std::unique_ptr<WebSocketChannel> Dial(boost::asio::any_io_executor executor,
                                                Scheduler& scheduler, const std::string& url) {
    return Dial(std::move(executor), scheduler, url, Options{});
  }

  ~WebSocketChannel() override;

  void Send(const codec::Frame& frame) override;
  void SendCommits(const SharedCommits& commits) override;
  void Close() override;

  void SendText(std::string text) override;
  // A binary message of any bytes, as they are (tools and tests).
  void SendBinary(std::string bytes);
  Traffic traffic() const override;

  class Session;  // The socket and its loops (websocket.cc).

  // Takes a session the listener accepted (see Accepted()).
  WebSocketChannel(Scheduler& scheduler, std::shared_ptr<Session> session);

  void HoldReading(std::function<bool()> hold) override { hold_ = std::move(hold); }

 private:
  void SendEncoded(codec::Result<std::string> bytes);
  friend class Session;
  void OnMessage(bool binary, std::string bytes);
  void OnEnd(codec::Refusal why);
  // Queues one message, or gives up on a peer past the queue's bound.
  void Queue(bool binary, std::string bytes);
  // Ends the connection for `limit`: sends the fault, then closes.
  void EndForLimit(const std::string& why);

  std::shared_ptr<Session> session_;
  std::function<bool()> hold_;  // HoldReading()
};

// Accepts WebSocket connections on `port` of `address` (0 picks one) and
// hands each to `on_channel` once its handshake is done (TLS first, when
// options.tls is set).
class WebSocketListener {
 public:
  WebSocketListener(boost::asio::any_io_executor executor, Scheduler& scheduler,
                    const std::string& address, uint16_t port,
                    std::function<void(std::unique_ptr<WebSocketChannel>)> on_channel,
                    WebSocketChannel::Options options = {});
  ~WebSocketListener();
  uint16_t port() const;
  // Stops accepting; a handshake under way hands nothing on.
  void Stop();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace aweft::sync
