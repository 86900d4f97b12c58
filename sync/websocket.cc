// The WebSocket channel: the one place the link meets Boost.Beast. A Session
// owns the socket and runs two loops (read, write) as coroutines on the
// socket's executor; the channel hands it frames and hears what arrives.

#include "sync/websocket.h"

#include <deque>
#include <exception>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/websocket/stream.hpp>

namespace aweft::sync {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
using tcp = asio::ip::tcp;

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

// A coroutine that throws stops the process (fail-stop), never silently.
void Rethrow(std::exception_ptr e) {
  if (e) std::rethrow_exception(e);
}

}  // namespace

class WebSocketChannel::Session : public std::enable_shared_from_this<Session> {
 public:
  using Stream = websocket::stream<beast::tcp_stream>;

  Session(Stream stream, const Options& options, beast::role_type role)
      : options(options),
        stream_(std::move(stream)),
        wake_(stream_.get_executor(), asio::steady_timer::time_point::max()),
        deadline_(stream_.get_executor()) {
    stream_.read_message_max(options.max_message);
    stream_.binary(true);
    websocket::stream_base::timeout timeout = websocket::stream_base::timeout::suggested(role);
    if (options.idle_timeout.count() > 0) {
      timeout.idle_timeout = options.idle_timeout;
      timeout.keep_alive_pings = true;  // A ping at half the idle time.
    } else {
      timeout.idle_timeout = websocket::stream_base::none();
    }
    stream_.set_option(timeout);
  }

  const Options options;
  WebSocketChannel* owner = nullptr;  // Cleared when the channel goes.
  Traffic traffic;

  // Starts the loops on an open connection.
  void Start() {
    open_ = true;
    // Frames are small and batched already: don't let Nagle hold them back.
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().set_option(tcp::no_delay(true), ignored);
    asio::co_spawn(stream_.get_executor(), ReadLoop(shared_from_this()), Rethrow);
    asio::co_spawn(stream_.get_executor(), WriteLoop(shared_from_this()), Rethrow);
  }

  static asio::awaitable<void> Dial(std::shared_ptr<Session> self, std::string host,
                                    std::string port, std::string path, std::string bearer) {
    if (!bearer.empty()) {
      self->stream_.set_option(websocket::stream_base::decorator(
          [bearer](websocket::request_type& request) {
            request.set(beast::http::field::authorization, "Bearer " + bearer);
          }));
    }
    tcp::resolver resolver(self->stream_.get_executor());
    auto [rec, endpoints] = co_await resolver.async_resolve(host, port, kNoThrow);
    if (rec) co_return self->Fail("cannot resolve " + host + ": " + rec.message());
    auto [cec, endpoint] =
        co_await beast::get_lowest_layer(self->stream_).async_connect(endpoints, kNoThrow);
    if (cec) co_return self->Fail("cannot connect to " + host + ":" + port + ": " + cec.message());
    auto [hec] = co_await self->stream_.async_handshake(host + ":" + port, path, kNoThrow);
    if (hec) co_return self->Fail("the WebSocket handshake failed: " + hec.message());
    self->Start();
  }

  // Queues a message. False, queuing nothing, when it would pass
  // max_queued_bytes.
  bool Send(bool binary, std::string bytes) {
    if (closing_) return true;
    const size_t limit = options.max_queued_bytes;
    if (limit > 0 && traffic.queued_bytes + bytes.size() > limit) return false;
    traffic.queued_bytes += bytes.size();
    outbox_.emplace_back(binary, std::move(bytes));
    wake_.cancel();
    return true;
  }

  // Drops what is queued but not being written, sends `last` (a fault) in
  // its place and closes; ends at once if that takes over 5 s.
  void Abandon(std::string last) {
    if (closing_) return;
    const size_t keep = writing_ ? 1 : 0;
    while (outbox_.size() > keep) {
      traffic.queued_bytes -= outbox_.back().second.size();
      outbox_.pop_back();
    }
    traffic.queued_bytes += last.size();
    outbox_.emplace_back(true, std::move(last));
    ArmDeadline();
    CloseAfterDrain();
  }

  // The channel is gone. A session closing already still sends its last
  // frames (a fault that says why, say), for at most 5 s; any other ends now.
  void Release() {
    owner = nullptr;
    if (!closing_ || ended_) return Fail("the channel was destroyed");
    ArmDeadline();
  }

  // Sends what is queued, then closes.
  void CloseAfterDrain() {
    closing_ = true;
    wake_.cancel();
    if (!open_) Fail("closed before it opened");
  }

  // Ends the connection at once.
  void Fail(std::string reason) {
    closing_ = true;
    if (!ended_) {
      ended_ = true;
      beast::error_code ignored;
      beast::get_lowest_layer(stream_).socket().close(ignored);
      wake_.cancel();
      deadline_.cancel();
      if (owner) owner->OnEnd(std::move(reason));
    }
  }

 private:
  void ArmDeadline() {
    deadline_.expires_after(std::chrono::seconds(5));
    deadline_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->Fail("the other end did not take its last frames within 5 s");
    });
  }

  static asio::awaitable<void> ReadLoop(std::shared_ptr<Session> self) {
    beast::flat_buffer buffer;
    while (!self->ended_) {
      auto [ec, n] = co_await self->stream_.async_read(buffer, kNoThrow);
      if (ec) {
        if (ec == websocket::error::closed) {
          self->Fail("the other end closed");
        } else if (ec == beast::error::timeout) {
          self->Fail("idle: nothing arrived for " +
                     std::to_string(self->options.idle_timeout.count()) +
                     " s, not even a pong (limits.idle_timeout_seconds)");
        } else {
          self->Fail("the connection ended: " + ec.message());
        }
        break;
      }
      const bool binary = self->stream_.got_binary();
      std::string bytes = beast::buffers_to_string(buffer.data());
      buffer.consume(n);
      self->traffic.bytes_in += bytes.size();
      if (self->owner) self->owner->OnMessage(binary, std::move(bytes));
    }
  }

  static asio::awaitable<void> WriteLoop(std::shared_ptr<Session> self) {
    while (!self->ended_) {
      if (self->outbox_.empty()) {
        if (self->closing_) {
          (void)co_await self->stream_.async_close(websocket::close_code::normal, kNoThrow);
          self->Fail("closed");
          break;
        }
        co_await self->wake_.async_wait(kNoThrow);
        continue;
      }
      auto& [binary, bytes] = self->outbox_.front();
      self->stream_.binary(binary);
      self->writing_ = true;
      auto [ec, n] = co_await self->stream_.async_write(asio::buffer(bytes), kNoThrow);
      self->writing_ = false;
      if (ec) {
        self->Fail("a write failed: " + ec.message());
        break;
      }
      self->traffic.bytes_out += bytes.size();
      self->traffic.queued_bytes -= bytes.size();
      self->outbox_.pop_front();
    }
  }

  Stream stream_;
  asio::steady_timer wake_, deadline_;
  std::deque<std::pair<bool, std::string>> outbox_;
  bool open_ = false, closing_ = false, ended_ = false;
  bool writing_ = false;  // outbox_.front() is being written.
};

WebSocketChannel::WebSocketChannel(Scheduler& scheduler, std::shared_ptr<Session> session)
    : ChannelBase(scheduler), session_(std::move(session)) {
  session_->owner = this;
}

WebSocketChannel::~WebSocketChannel() { session_->Release(); }

std::unique_ptr<WebSocketChannel> WebSocketChannel::Dial(asio::any_io_executor executor,
                                                         Scheduler& scheduler,
                                                         const std::string& url,
                                                         Options options) {
  // ws://host:port/path
  std::string rest = url.rfind("ws://", 0) == 0 ? url.substr(5) : url;
  const size_t slash = rest.find('/');
  std::string path = slash == std::string::npos ? "/" : rest.substr(slash);
  std::string authority = rest.substr(0, slash);
  const size_t colon = authority.rfind(':');
  std::string host = authority.substr(0, colon);
  std::string port = colon == std::string::npos ? "80" : authority.substr(colon + 1);
  auto session =
      std::make_shared<Session>(Session::Stream(executor), options, beast::role_type::client);
  auto channel = std::make_unique<WebSocketChannel>(scheduler, session);
  asio::co_spawn(executor, Session::Dial(session, host, port, path, options.bearer), Rethrow);
  return channel;
}

const WebSocketChannel::Traffic& WebSocketChannel::traffic() const { return session_->traffic; }

void WebSocketChannel::Send(const codec::Frame& frame) { SendEncoded(codec::EncodeFrame(frame)); }

void WebSocketChannel::SendCommits(const SharedCommits& commits) { SendEncoded(commits.Encode()); }

void WebSocketChannel::SendEncoded(codec::Result<std::string> bytes) {
  if (ended()) return;
  if (!bytes) return OnEnd("a frame could not be encoded: " + bytes.error().ToString());
  Queue(true, std::move(*bytes));
}

void WebSocketChannel::SendText(std::string text) { Queue(false, std::move(text)); }

void WebSocketChannel::SendBinary(std::string bytes) { Queue(true, std::move(bytes)); }

void WebSocketChannel::Queue(bool binary, std::string bytes) {
  if (ended() || session_->Send(binary, std::move(bytes))) return;
  EndForLimit("more than " + std::to_string(session_->options.max_queued_bytes) +
              " bytes wait to be sent: the other end reads too slowly "
              "(limits.send_queue_bytes)");
}

void WebSocketChannel::EndForLimit(const std::string& why) {
  auto fault = codec::EncodeFrame(codec::FaultFrame{0, "limit", why});
  session_->Abandon(fault ? std::move(*fault) : std::string());
  EndWith("limit: " + why);
}

void WebSocketChannel::Close() {
  if (ended()) return;
  session_->CloseAfterDrain();
  End();
}

void WebSocketChannel::OnMessage(bool binary, std::string bytes) {
  if (ended()) return;
  if (!binary) {
    const size_t limit = session_->options.max_text;
    if (limit > 0 && bytes.size() > limit) {
      return EndForLimit("a text message of " + std::to_string(bytes.size()) +
                         " bytes is over " + std::to_string(limit) + " (limits.max_text_bytes)");
    }
    if (on_text_) on_text_(bytes);
    return;
  }
  // Bytes that are not a frame end the link, and the socket under it.
  if (auto bad = DeliverBytes(bytes)) session_->Fail(std::move(*bad));
}

void WebSocketChannel::OnEnd(std::string reason) { EndWith(std::move(reason)); }

// --- Listener

struct WebSocketListener::State : std::enable_shared_from_this<State> {
  State(asio::any_io_executor executor, Scheduler& scheduler) : acceptor(executor), scheduler(scheduler) {}
  tcp::acceptor acceptor;
  Scheduler& scheduler;
  std::function<void(std::unique_ptr<WebSocketChannel>)> on_channel;
  WebSocketChannel::Options options;
  bool stopped = false;

  static asio::awaitable<void> Accept(std::shared_ptr<State> self) {
    while (!self->stopped) {
      auto [ec, socket] = co_await self->acceptor.async_accept(kNoThrow);
      if (ec) {
        if (self->stopped || ec == asio::error::operation_aborted) break;
        continue;  // One failed accept does not end the listener.
      }
      asio::co_spawn(self->acceptor.get_executor(), Handshake(self, std::move(socket)), Rethrow);
    }
  }

  static asio::awaitable<void> Handshake(std::shared_ptr<State> self, tcp::socket socket) {
    beast::error_code ignored;
    const auto peer = socket.remote_endpoint(ignored);
    WebSocketChannel::Session::Stream stream(std::move(socket));
    // Read the upgrade request ourselves, to keep its target and headers.
    beast::flat_buffer buffer;
    beast::http::request<beast::http::string_body> request;
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
    auto [rec, rn] = co_await beast::http::async_read(beast::get_lowest_layer(stream), buffer,
                                                      request, kNoThrow);
    if (rec || self->stopped || !websocket::is_upgrade(request)) co_return;
    beast::get_lowest_layer(stream).expires_never();
    auto [ec] = co_await stream.async_accept(request, kNoThrow);
    if (ec || self->stopped) co_return;
    WebSocketChannel::Handshake handshake{
        std::string(request.target()),
        std::string(request[beast::http::field::authorization]),
        peer.address().to_string() + ":" + std::to_string(peer.port())};
    auto session = std::make_shared<WebSocketChannel::Session>(
        std::move(stream), self->options, beast::role_type::server);
    auto channel = std::make_unique<WebSocketChannel>(self->scheduler, session);
    channel->set_handshake(std::move(handshake));
    session->Start();
    self->on_channel(std::move(channel));
  }
};

WebSocketListener::WebSocketListener(asio::any_io_executor executor, Scheduler& scheduler,
                                     const std::string& address, uint16_t port,
                                     std::function<void(std::unique_ptr<WebSocketChannel>)> on_channel,
                                     WebSocketChannel::Options options)
    : state_(std::make_shared<State>(executor, scheduler)) {
  state_->on_channel = std::move(on_channel);
  state_->options = options;
  tcp::endpoint endpoint(asio::ip::make_address(address), port);
  state_->acceptor.open(endpoint.protocol());
  state_->acceptor.set_option(asio::socket_base::reuse_address(true));
  state_->acceptor.bind(endpoint);
  state_->acceptor.listen();
  asio::co_spawn(executor, State::Accept(state_), Rethrow);
}

WebSocketListener::~WebSocketListener() { Stop(); }

uint16_t WebSocketListener::port() const { return state_->acceptor.local_endpoint().port(); }

void WebSocketListener::Stop() {
  if (state_->stopped) return;
  state_->stopped = true;
  beast::error_code ignored;
  state_->acceptor.close(ignored);
}

}  // namespace aweft::sync
