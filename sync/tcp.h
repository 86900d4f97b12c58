#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "sync/asio_scheduler.h"
#include "sync/channel.h"

namespace aweft::sync {

// A channel over one TCP connection (Asio only), for the dialing and the
// accepting end alike. Each frame travels as a 4-byte big-endian length and
// then the frame's canonical bytes. Frames sent while the connection is still
// opening are held and sent, in order, once it is open. A length over the
// limit, or bytes that do not decode as a frame, end the channel and close
// the socket; they never reach the process.
// Lives on the executor's thread; the scheduler must post to that executor.
class TcpChannel : public ChannelBase {
 public:
  struct Options {
    // The largest frame read; a longer announced length ends the channel
    // before anything is allocated for it. Default: 16 MiB.
    size_t max_frame = 16 << 20;
  };

  // Dials `host`:`port`.
  static std::unique_ptr<TcpChannel> Dial(boost::asio::any_io_executor executor,
                                          Scheduler& scheduler, const std::string& host,
                                          uint16_t port, Options options);
  static std::unique_ptr<TcpChannel> Dial(boost::asio::any_io_executor executor,
                                          Scheduler& scheduler, const std::string& host,
                                          uint16_t port) {
    return Dial(std::move(executor), scheduler, host, port, Options{});
  }

  ~TcpChannel() override;

  void Send(const codec::Frame& frame) override;
  void SendCommits(const SharedCommits& commits) override;
  // Sends what is queued, then closes the connection.
  void Close() override;

  // Any bytes as one length-prefixed frame, as they are (tools and tests).
  void SendBinary(std::string bytes);

  class Session;  // The socket and its loops (tcp.cc).

  // Takes a session the listener accepted.
  TcpChannel(Scheduler& scheduler, std::shared_ptr<Session> session);

 private:
  void SendEncoded(codec::Result<std::string> bytes);
  friend class Session;
  void OnBytes(std::string bytes);
  void OnEnd(codec::Refusal why);

  std::shared_ptr<Session> session_;
};

// Accepts TCP connections on `address`:`port` (port 0 picks one) and hands
// each to `on_channel`.
class TcpListener {
 public:
  TcpListener(boost::asio::any_io_executor executor, Scheduler& scheduler,
              const std::string& address, uint16_t port,
              std::function<void(std::unique_ptr<TcpChannel>)> on_channel,
              TcpChannel::Options options = {});
  ~TcpListener();
  uint16_t port() const;
  void Stop();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace aweft::sync
