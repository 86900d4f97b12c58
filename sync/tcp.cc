// The TCP channel: length-prefixed frames over a plain socket, Asio only. A
// Session owns the socket and runs two loops (read, write) as coroutines on
// the socket's executor; the channel hands it bytes and hears what arrives.

#include "sync/tcp.h"

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <exception>
#include <vector>

#include "codec/refusal.h"
#include "sync/listen.h"

namespace aweft::sync {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
constexpr size_t kHeader = 4;                      // The frame length, big-endian.
constexpr size_t kWriteBatch = 64;                 // Frames gathered into one write.
constexpr auto kLinger = std::chrono::seconds(5);  // Waiting for the far end
                                                   // to close after ours.

// A coroutine that throws stops the process (fail-stop), never silently.
void Rethrow(std::exception_ptr e) {
  if (e) std::rethrow_exception(e);
}

codec::Refusal Limit(uint64_t length, size_t max) {
  return {codec::Reason::kLimit, "a frame of " + std::to_string(length) +
                                     " bytes is over the limit of " + std::to_string(max)};
}

// Why a connection ended on its own: the socket closed, failed or timed out.
codec::Refusal SocketEnd(std::string how) { return {codec::Reason::kClosed, std::move(how)}; }

}  // namespace

class TcpChannel::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, size_t max_frame)
      : socket_(std::move(socket)),
        wake_(socket_.get_executor(), asio::steady_timer::time_point::max()),
        max_frame_(max_frame) {}

  TcpChannel* owner = nullptr;  // Cleared when the channel goes.

  // Starts the loops on an open connection.
  void Start() {
    boost::system::error_code ignored;
    socket_.set_option(tcp::no_delay(true), ignored);
    asio::co_spawn(socket_.get_executor(), ReadLoop(shared_from_this()), Rethrow);
    asio::co_spawn(socket_.get_executor(), WriteLoop(shared_from_this()), Rethrow);
  }

  static asio::awaitable<void> Dial(std::shared_ptr<Session> self, std::string host,
                                    std::string port) {
    tcp::resolver resolver(self->socket_.get_executor());
    auto [rec, endpoints] = co_await resolver.async_resolve(host, port, kNoThrow);
    if (rec) {
      co_return self->Fail(SocketEnd("cannot resolve " + host + ": " + rec.message()));
    }
    if (self->ended_) co_return;
    auto [cec, endpoint] = co_await asio::async_connect(self->socket_, endpoints, kNoThrow);
    if (cec) {
      co_return self->Fail(
          SocketEnd("cannot connect to " + host + ":" + port + ": " + cec.message()));
    }
    if (!self->ended_) self->Start();
  }

  // Queues one length-prefixed frame.
  void Send(std::string framed) {
    if (closing_) return;
    outbox_.push_back(std::move(framed));
    wake_.cancel();
  }

  // Sends what is queued (once open, for a dialing end), then closes.
  void CloseAfterDrain() {
    closing_ = true;
    wake_.cancel();
  }
  bool draining() const { return closing_ && !ended_; }

  // Ends the connection at once.
  void Fail(codec::Refusal why) {
    closing_ = true;
    if (ended_) return;
    ended_ = true;
    boost::system::error_code ignored;
    socket_.close(ignored);  // Ends a pending read or write.
    wake_.cancel();
    if (owner) owner->OnEnd(std::move(why));
  }

 private:
  static asio::awaitable<void> ReadLoop(std::shared_ptr<Session> self) {
    std::array<unsigned char, kHeader> head;
    while (!self->ended_) {
      auto [ec, n] = co_await asio::async_read(self->socket_, asio::buffer(head), kNoThrow);
      if (ec) {
        self->Fail(SocketEnd(ec == asio::error::eof && n == 0 ? "the other end closed"
                                                              : Ended(ec, n > 0)));
        break;
      }
      const uint32_t length = uint32_t{head[0]} << 24 | uint32_t{head[1]} << 16 |
                              uint32_t{head[2]} << 8 | uint32_t{head[3]};
      // Checked before allocating: the length is the peer's word only.
      if (length > self->max_frame_) {
        self->Fail(Limit(length, self->max_frame_));
        break;
      }
      std::string body(length, '\0');
      auto [bec, bn] = co_await asio::async_read(self->socket_, asio::buffer(body), kNoThrow);
      if (bec) {
        self->Fail(SocketEnd(Ended(bec, true)));
        break;
      }
      if (self->owner) self->owner->OnBytes(std::move(body));
    }
  }

  static std::string Ended(const boost::system::error_code& ec, bool inside_frame) {
    if (ec == asio::error::eof && inside_frame) {
      return "the connection ended inside a frame";
    }
    return "the connection ended: " + ec.message();
  }

  static asio::awaitable<void> WriteLoop(std::shared_ptr<Session> self) {
    std::vector<std::string> batch;
    std::vector<asio::const_buffer> buffers;
    while (!self->ended_) {
      if (self->outbox_.empty()) {
        if (self->closing_) {
          co_await Linger(self);
          break;
        }
        co_await self->wake_.async_wait(kNoThrow);
        continue;
      }
      batch.clear();
      buffers.clear();
      while (!self->outbox_.empty() && batch.size() < kWriteBatch) {
        batch.push_back(std::move(self->outbox_.front()));
        self->outbox_.pop_front();
      }
      // Only once `batch` has stopped growing: a short string's bytes move
      // with it.
      for (const auto& framed : batch) buffers.push_back(asio::buffer(framed));
      auto [ec, n] = co_await asio::async_write(self->socket_, buffers, kNoThrow);
      if (ec) {
        self->Fail(SocketEnd("a write failed: " + ec.message()));
        break;
      }
    }
  }

  // Everything is sent: half-close, and let the far end close first so
  // nothing in flight is reset; give up after kLinger.
  static asio::awaitable<void> Linger(std::shared_ptr<Session> self) {
    boost::system::error_code ignored;
    self->socket_.shutdown(tcp::socket::shutdown_send, ignored);
    self->wake_.expires_after(kLinger);
    co_await self->wake_.async_wait(kNoThrow);
    self->Fail(SocketEnd("the connection closed"));
  }

  tcp::socket socket_;
  asio::steady_timer wake_;
  size_t max_frame_;
  std::deque<std::string> outbox_;
  bool closing_ = false, ended_ = false;
};

TcpChannel::TcpChannel(Scheduler& scheduler, std::shared_ptr<Session> session)
    : ChannelBase(scheduler), session_(std::move(session)) {
  session_->owner = this;
}

TcpChannel::~TcpChannel() {
  session_->owner = nullptr;
  // A closing channel finishes sending on its own; any other goes at once.
  if (!session_->draining()) session_->Fail(SocketEnd("the channel was destroyed"));
}

std::unique_ptr<TcpChannel> TcpChannel::Dial(asio::any_io_executor executor, Scheduler& scheduler,
                                             const std::string& host, uint16_t port,
                                             Options options) {
  auto session = std::make_shared<Session>(tcp::socket(executor), options.max_frame);
  auto channel = std::make_unique<TcpChannel>(scheduler, session);
  asio::co_spawn(executor, Session::Dial(session, host, std::to_string(port)), Rethrow);
  return channel;
}

void TcpChannel::Send(const codec::Frame& frame) { SendEncoded(codec::EncodeFrame(frame)); }

void TcpChannel::SendCommits(const SharedCommits& commits) { SendEncoded(commits.Encode()); }

void TcpChannel::SendEncoded(codec::Result<std::string> bytes) {
  if (ended()) return;
  if (!bytes) {
    return session_->Fail(
        {bytes.error().reason, "a frame could not be encoded: " + bytes.error().message});
  }
  SendBinary(std::move(*bytes));
}

void TcpChannel::SendBinary(std::string bytes) {
  if (ended()) return;
  if (bytes.size() > UINT32_MAX) {
    return session_->Fail(Limit(bytes.size(), UINT32_MAX));
  }
  const auto length = static_cast<uint32_t>(bytes.size());
  std::string framed;
  framed.reserve(kHeader + bytes.size());
  for (int shift = 24; shift >= 0; shift -= 8) {
    framed.push_back(static_cast<char>(length >> shift & 0xff));
  }
  framed += bytes;
  session_->Send(std::move(framed));
}

void TcpChannel::Close() {
  if (ended()) return;
  session_->CloseAfterDrain();
  EndWith(SocketEnd("closed by this end"));
}

void TcpChannel::OnBytes(std::string bytes) {
  if (ended()) return;
  // Bytes that are not a frame end the link, and the socket under it.
  if (auto bad = DeliverBytes(bytes)) session_->Fail(std::move(*bad));
}

void TcpChannel::OnEnd(codec::Refusal why) { EndWith(std::move(why)); }

// --- Listener

struct TcpListener::State : std::enable_shared_from_this<State> {
  State(tcp::acceptor acceptor, Scheduler& scheduler)
      : acceptor(std::move(acceptor)), scheduler(scheduler) {}
  tcp::acceptor acceptor;
  Scheduler& scheduler;
  std::function<void(std::unique_ptr<TcpChannel>)> on_channel;
  TcpChannel::Options options;
  bool stopped = false;

  static void Accept(const std::shared_ptr<State>& self) {
    AcceptLoop(
        self->acceptor, [state = self.get()] { return state->stopped; },
        [self](tcp::socket socket) {
          auto session =
              std::make_shared<TcpChannel::Session>(std::move(socket), self->options.max_frame);
          auto channel = std::make_unique<TcpChannel>(self->scheduler, session);
          session->Start();
          self->on_channel(std::move(channel));
        });
  }
};

TcpListener::TcpListener(asio::any_io_executor executor, Scheduler& scheduler,
                         const std::string& address, uint16_t port,
                         std::function<void(std::unique_ptr<TcpChannel>)> on_channel,
                         TcpChannel::Options options)
    : state_(std::make_shared<State>(Listen(executor, address, port), scheduler)) {
  state_->on_channel = std::move(on_channel);
  state_->options = options;
  State::Accept(state_);
}

TcpListener::~TcpListener() { Stop(); }

uint16_t TcpListener::port() const { return state_->acceptor.local_endpoint().port(); }

void TcpListener::Stop() {
  if (state_->stopped) return;
  state_->stopped = true;
  boost::system::error_code ignored;
  state_->acceptor.close(ignored);
}

}  // namespace aweft::sync
