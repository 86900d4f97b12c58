// The WebSocket channel: the one place the link meets Boost.Beast. A Session
// owns the socket (plain TCP or TLS) and runs two loops (read, write) as
// coroutines on the socket's executor; the channel hands it frames and hears
// what arrives.

#include "sync/websocket.h"

#include <unistd.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <deque>
#include <exception>
#include <type_traits>

#include "sync/listen.h"
#include "sync/tls.h"

namespace aweft::sync {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = boost::asio::ssl;
namespace websocket = boost::beast::websocket;
using tcp = asio::ip::tcp;

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
// The most read from a socket at once.
constexpr size_t kReadPart = 64 << 10;

// Why a connection ended on its own: the socket closed, failed or timed out.
codec::Refusal SocketEnd(std::string how) { return {codec::Reason::kClosed, std::move(how)}; }

// A coroutine that throws stops the process (fail-stop), never silently.
void Rethrow(std::exception_ptr e) {
  if (e) std::rethrow_exception(e);
}

}  // namespace

// What a session does that does not depend on its stream: the outbox, the
// closing and ending, the deadline for last frames. It runs on the thread of
// its socket's executor, which is its channel's too.
class WebSocketChannel::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(asio::any_io_executor executor, const Options& options)
      : options(options),
        wake_(executor, asio::steady_timer::time_point::max()),
        deadline_(executor),
        held_back_(executor) {}
  virtual ~Session() = default;

  const Options options;
  WebSocketChannel* owner = nullptr;  // Cleared when the channel goes.
  // Accepted: counts this connection among the listener's open ones until
  // the session goes (after its socket, a member of the derived class).
  std::shared_ptr<void> ticket;

  Traffic traffic() const { return {bytes_in_, bytes_out_, queued_bytes_}; }

  // Queues a message. False, queuing nothing, when it would pass
  // max_queued_bytes. The bound is on the backlog: one message larger than
  // it at a time (a large document's state) is not counted, so it goes, with
  // the bound's worth of others around it.
  bool Send(bool binary, std::string bytes) {
    const size_t size = bytes.size();
    const size_t limit = options.max_queued_bytes;
    const bool exempt = limit > 0 && size > limit && exempt_bytes_ == 0;
    if (limit > 0 && !exempt && queued_bytes_ - exempt_bytes_ + size > limit) return false;
    if (closing_) return true;
    if (exempt) {
      exempt_bytes_ = size;
      exempt_seq_ = pushed_;
    }
    queued_bytes_ += size;
    ++pushed_;
    outbox_.emplace_back(binary, std::move(bytes));
    wake_.cancel();
    Charge();
    return true;
  }

  // Drops what is queued but not being written, sends `last` (a fault) in
  // its place and closes; ends at once if that takes over 5 s.
  void Abandon(std::string last) {
    if (closing_) return;
    const size_t keep = writing_ ? 1 : 0;
    while (outbox_.size() > keep) {
      queued_bytes_ -= outbox_.back().second.size();
      outbox_.pop_back();
      if (--pushed_ == exempt_seq_) exempt_bytes_ = 0;
    }
    queued_bytes_ += last.size();
    ++pushed_;
    outbox_.emplace_back(true, std::move(last));
    Charge();
    ArmDeadline();
    CloseAfterDrain();
  }

  // Counts this connection in options.budget, if any, from now on.
  void JoinBudget() {
    if (!options.budget) return;
    auto executor = wake_.get_executor();
    held_ = MemoryBudget::Join(options.budget,
                               [executor, weak = weak_from_this()](const std::string& why) {
                                 asio::post(executor, [weak, why] {
                                   if (auto self = weak.lock()) self->Cut(why);
                                 });
                               });
  }

  // Ends the connection for a limit: what it read goes now, with its read;
  // the fault that says why still goes out.
  void Cut(const std::string& why) {
    if (ended_ || cut_) return;
    cut_ = true;
    StopReading();
    if (owner) return owner->EndForLimit(why);
    Fail({codec::Reason::kLimit, why});
  }

  // The channel is gone. A session closing already still sends its last
  // frames (a fault that says why, say), for at most 5 s; any other ends now.
  void Release() {
    owner = nullptr;
    if (!closing_ || ended_) return Fail(SocketEnd("the channel was destroyed"));
    ArmDeadline();
  }

  // Sends what is queued, then closes.
  void CloseAfterDrain() {
    closing_ = true;
    wake_.cancel();
    if (!open_) Fail(SocketEnd("closed before it opened"));
  }

  // Ends the connection at once, for `why`.
  void Fail(codec::Refusal why) {
    closing_ = true;
    if (ended_) return;
    ended_ = true;
    CloseSocket();
    wake_.cancel();
    deadline_.cancel();
    held_back_.cancel();
    if (owner) owner->OnEnd(std::move(why));
  }

 protected:
  virtual void CloseSocket() = 0;
  // Ends the read under way, leaving the socket open for writes.
  virtual void StopReading() = 0;

  // A message is arriving and `partial` bytes of it are in. False when it
  // has taken longer than options.message_timeout: the connection is ended.
  // Arriving(0): none is.
  bool Arriving(uint64_t partial) {
    const auto now = std::chrono::steady_clock::now();
    if (inbound_bytes_ == 0) message_started_ = now;
    inbound_bytes_ = partial;
    if (partial == 0) return Charge(), true;
    const auto bound = options.message_timeout;
    if (bound.count() > 0 && now - message_started_ > bound) {
      const std::string why = "a message still arriving after " + std::to_string(bound.count()) +
                              " s, " + std::to_string(partial) +
                              " bytes in (limits.message_timeout_seconds)";
      Cut(why);
      return false;
    }
    Charge();
    return true;
  }

  // Hands an arrived message to the channel, if it is still there.
  void Deliver(bool binary, std::string bytes) {
    bytes_in_ += bytes.size();
    if (owner) owner->OnMessage(binary, std::move(bytes));
  }

  // A message left the outbox for the socket.
  // The message at the front of the outbox is written (and goes next).
  void Sent(size_t bytes) {
    bytes_out_ += bytes;
    queued_bytes_ -= bytes;
    if (popped_++ == exempt_seq_) exempt_bytes_ = 0;
    Charge();
  }

  // Tells the budget what this connection holds, in steps of 4 KiB (and
  // when it comes back to nothing): a small frame queued and written takes
  // no lock, and each connection holds at most 4 KiB more than it said.
  void Charge() {
    if (!held_) return;
    const uint64_t now = queued_bytes_ + inbound_bytes_;
    const uint64_t moved = now > charged_ ? now - charged_ : charged_ - now;
    if (moved < 4096 && (now != 0 || charged_ == 0)) return;
    charged_ = now;
    held_->Hold(now);
  }

  void ArmDeadline() {
    deadline_.expires_after(std::chrono::seconds(5));
    deadline_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->Fail(SocketEnd("the other end did not take its last frames within 5 s"));
    });
  }

  // True while the channel holds reading back (HoldReading()).
  bool HeldBack() const { return owner && owner->hold_ && owner->hold_(); }

  asio::steady_timer wake_, deadline_, held_back_;
  std::deque<std::pair<bool, std::string>> outbox_;
  bool open_ = false, closing_ = false, ended_ = false;
  bool writing_ = false;  // outbox_.front() is being written.
  bool cut_ = false;      // Ended for a limit: read no more.

 private:
  std::unique_ptr<MemoryBudget::Holder> held_;
  uint64_t charged_ = 0;        // What held_ was last told.
  uint64_t inbound_bytes_ = 0;  // Of a message still arriving.
  std::chrono::steady_clock::time_point message_started_;
  uint64_t bytes_in_ = 0, bytes_out_ = 0, queued_bytes_ = 0;
  // The one message over max_queued_bytes not counted against it, if any:
  // its size, and its place in the order of messages queued (pushed_ counts
  // those queued, popped_ those written).
  uint64_t exempt_bytes_ = 0, exempt_seq_ = UINT64_MAX, pushed_ = 0, popped_ = 0;
};

namespace {

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// A session over a plain TCP stream (Next = beast::tcp_stream) or a TLS
// one (TlsStream): the socket and its two loops.
template <class Next>
class StreamSession final : public WebSocketChannel::Session {
 public:
  using Stream = websocket::stream<Next>;
  static constexpr bool kTls = std::is_same_v<Next, TlsStream>;

  // `tls` is the context `stream` was made with (null for plain).
  StreamSession(std::shared_ptr<ssl::context> tls, Stream stream,
                const WebSocketChannel::Options& options, beast::role_type role)
      : Session(stream.get_executor(), options), tls_(std::move(tls)), stream_(std::move(stream)) {
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

  // Starts the loops on an open connection.
  void Start() {
    open_ = true;
    JoinBudget();
    // Frames are small and batched already: don't let Nagle hold them back.
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().set_option(tcp::no_delay(true), ignored);
    auto self = std::static_pointer_cast<StreamSession>(shared_from_this());
    asio::co_spawn(stream_.get_executor(), ReadLoop(self), Rethrow);
    asio::co_spawn(stream_.get_executor(), WriteLoop(self), Rethrow);
  }

  static asio::awaitable<void> Dial(std::shared_ptr<StreamSession> self, std::string host,
                                    std::string port, std::string path, std::string bearer) {
    if (!bearer.empty()) {
      self->stream_.set_option(
          websocket::stream_base::decorator([bearer](websocket::request_type& request) {
            request.set(beast::http::field::authorization, "Bearer " + bearer);
          }));
    }
    tcp::resolver resolver(self->stream_.get_executor());
    auto [rec, endpoints] = co_await resolver.async_resolve(host, port, kNoThrow);
    if (rec) co_return self->Fail(SocketEnd("cannot resolve " + host + ": " + rec.message()));
    auto& lowest = beast::get_lowest_layer(self->stream_);
    auto [cec, endpoint] = co_await lowest.async_connect(endpoints, kNoThrow);
    if (cec)
      co_return self->Fail(
          SocketEnd("cannot connect to " + host + ":" + port + ": " + cec.message()));
    if constexpr (kTls) {
      TlsStream& tls = self->stream_.next_layer();
      // The name to present (SNI) and to find in the certificate; an IP
      // address is matched as one and not sent as a name.
      boost::system::error_code not_ip;
      asio::ip::make_address(host, not_ip);
      if (not_ip) SSL_set_tlsext_host_name(tls.native_handle(), host.c_str());
      tls.set_verify_callback(ssl::host_name_verification(host));
      lowest.expires_after(std::chrono::seconds(30));
      auto [tec] = co_await tls.async_handshake(ssl::stream_base::client, kNoThrow);
      lowest.expires_never();
      if (tec) {
        co_return self->Fail(
            SocketEnd("the TLS handshake with " + host + ":" + port + " failed: " + tec.message()));
      }
    }
    auto [hec] = co_await self->stream_.async_handshake(host + ":" + port, path, kNoThrow);
    if (hec) co_return self->Fail(SocketEnd("the WebSocket handshake failed: " + hec.message()));
    self->Start();
  }

 private:
  void CloseSocket() override {
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().close(ignored);
  }

  void StopReading() override {
    beast::error_code ignored;
    beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_receive, ignored);
  }

  static asio::awaitable<void> ReadLoop(std::shared_ptr<StreamSession> self) {
    beast::flat_buffer buffer;
    while (!self->ended_ && !self->cut_) {
      if (self->HeldBack()) {
        self->held_back_.expires_after(std::chrono::milliseconds(50));
        (void)co_await self->held_back_.async_wait(kNoThrow);
        continue;
      }
      // A part at a time: what a message holds while it arrives counts in
      // the budget, and one that takes too long is cut.
      auto [ec, n] = co_await self->stream_.async_read_some(buffer, kReadPart, kNoThrow);
      if (self->cut_) break;  // Cut(): the fault it was sent ends it.
      if (ec) {
        if (ec == websocket::error::closed) {
          self->Fail(SocketEnd("the other end closed"));
        } else if (ec == beast::error::timeout) {
          self->Fail(SocketEnd("idle: nothing arrived for " +
                               std::to_string(self->options.idle_timeout.count()) +
                               " s, not even a pong (limits.idle_timeout_seconds)"));
        } else {
          self->Fail(SocketEnd("the connection ended: " + ec.message()));
        }
        break;
      }
      if (!self->stream_.is_message_done()) {
        if (!self->Arriving(buffer.size())) break;
        continue;
      }
      const bool binary = self->stream_.got_binary();
      std::string bytes = beast::buffers_to_string(buffer.data());
      self->Arriving(0);
      buffer.clear();
      // A large message's room goes back, not kept for the next.
      if (buffer.capacity() > kReadPart) buffer.shrink_to_fit();
      self->Deliver(binary, std::move(bytes));
    }
    self->Arriving(0);  // Read no more: what a message held is gone with the buffer.
  }

  static asio::awaitable<void> WriteLoop(std::shared_ptr<StreamSession> self) {
    while (!self->ended_) {
      if (self->outbox_.empty()) {
        if (self->closing_) {
          (void)co_await self->stream_.async_close(websocket::close_code::normal, kNoThrow);
          self->Fail(SocketEnd("the connection closed"));
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
        self->Fail(SocketEnd("a write failed: " + ec.message()));
        break;
      }
      self->Sent(bytes.size());
      self->outbox_.pop_front();
    }
  }

  std::shared_ptr<ssl::context> tls_;  // Outlives stream_, which uses it.
  Stream stream_;
};

// The context wss:// URLs are verified with when the options give none: the
// system's trusted certificates.
std::shared_ptr<ssl::context> SystemTls() {
  static const std::shared_ptr<ssl::context> context = [] {
    try {
      return ClientTls("");
    } catch (const TlsError&) {  // No store: every handshake fails, and says so.
      auto bare = std::make_shared<ssl::context>(ssl::context::tls_client);
      bare->set_verify_mode(ssl::verify_peer);
      return bare;
    }
  }();
  return context;
}

}  // namespace

WebSocketChannel::WebSocketChannel(Scheduler& scheduler, std::shared_ptr<Session> session)
    : TextChannel(scheduler), session_(std::move(session)) {
  session_->owner = this;
}

WebSocketChannel::~WebSocketChannel() { session_->Release(); }

std::unique_ptr<WebSocketChannel> WebSocketChannel::Dial(asio::any_io_executor executor,
                                                         Scheduler& scheduler,
                                                         const std::string& url, Options options) {
  // ws://host:port/path or wss://host:port/path
  const bool tls = url.rfind("wss://", 0) == 0;
  std::string rest = tls ? url.substr(6) : url.rfind("ws://", 0) == 0 ? url.substr(5) : url;
  const size_t slash = rest.find('/');
  std::string path = slash == std::string::npos ? "/" : rest.substr(slash);
  std::string authority = rest.substr(0, slash);
  const size_t colon = authority.rfind(':');
  std::string host = authority.substr(0, colon);
  std::string port = colon != std::string::npos ? authority.substr(colon + 1) : tls ? "443" : "80";
  auto start = [&](auto session) {
    auto channel = std::make_unique<WebSocketChannel>(scheduler, session);
    asio::co_spawn(executor, session->Dial(session, host, port, path, options.bearer), Rethrow);
    return channel;
  };
  if (!tls) {
    using Plain = StreamSession<beast::tcp_stream>;
    return start(std::make_shared<Plain>(nullptr, Plain::Stream(executor), options,
                                         beast::role_type::client));
  }
  using Tls = StreamSession<TlsStream>;
  auto context = options.tls ? options.tls : SystemTls();
  return start(std::make_shared<Tls>(context, Tls::Stream(executor, *context), options,
                                     beast::role_type::client));
}

WebSocketChannel::Traffic WebSocketChannel::traffic() const { return session_->traffic(); }

void WebSocketChannel::Send(const codec::Frame& frame) { SendEncoded(codec::EncodeFrame(frame)); }

void WebSocketChannel::SendCommits(const SharedCommits& commits) { SendEncoded(commits.Encode()); }

void WebSocketChannel::SendEncoded(codec::Result<std::string> bytes) {
  if (ended()) return;
  if (!bytes) {
    return OnEnd({bytes.error().reason, "a frame could not be encoded: " + bytes.error().message});
  }
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
  auto fault = codec::EncodeFrame(codec::FaultFrame{0, codec::Spelled(codec::Reason::kLimit), why});
  session_->Abandon(fault ? std::move(*fault) : std::string());
  EndWith({codec::Reason::kLimit, why});
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
      return EndForLimit("a text message of " + std::to_string(bytes.size()) + " bytes is over " +
                         std::to_string(limit) + " (limits.max_text_bytes)");
    }
    return DeliverText(bytes);
  }
  // Bytes that are not a frame end the link, and the socket under it.
  if (auto bad = DeliverBytes(bytes)) session_->Fail(std::move(*bad));
}

void WebSocketChannel::OnEnd(codec::Refusal why) { EndWith(std::move(why)); }

// --- Listener

struct WebSocketListener::State : std::enable_shared_from_this<State> {
  State(tcp::acceptor acceptor, Scheduler& scheduler)
      : acceptor(std::move(acceptor)), scheduler(scheduler) {}
  tcp::acceptor acceptor;
  Scheduler& scheduler;
  std::function<void(std::unique_ptr<WebSocketChannel>)> on_channel;
  WebSocketChannel::Options options;
  std::atomic<bool> stopped{false};  // Read by handshakes on placed threads.
  // Connections accepted and not yet closed; shared with their tickets,
  // which may outlive the listener.
  std::shared_ptr<std::atomic<size_t>> open = std::make_shared<std::atomic<size_t>>(0);

  // An accept that completed as the listener stopped is dropped: what it
  // would hand on to (on_channel) may be gone.
  static void Accept(const std::shared_ptr<State>& self) {
    AcceptLoop(
        self->acceptor, [state = self.get()] { return state->stopped.load(); },
        [self](tcp::socket socket) { Take(self, std::move(socket)); },
        [state = self.get()](size_t count) {
          if (state->options.on_shed) state->options.on_shed(false, count);
        });
  }

  // Accepted here, then moved to its thread: no operation pending on this
  // context refers to a socket of another, whichever is destroyed first.
  static void Take(const std::shared_ptr<State>& self, tcp::socket socket) {
    const size_t bound = self->options.max_connections;
    if (bound > 0 && self->open->load() >= bound) {
      // Closed at once: the other end sees its connection end, not a hang.
      if (self->options.on_shed) self->options.on_shed(true, 1);
      return;
    }
    ++*self->open;
    std::shared_ptr<void> ticket(nullptr, [open = self->open](void*) { --*open; });
    Scheduler* scheduler = &self->scheduler;
    if (self->options.place) {
      auto [executor, placed] = self->options.place();
      if (!MoveTo(executor, socket)) return;
      scheduler = placed;
    }
    auto executor = socket.get_executor();
    if (self->options.tls) {
      asio::co_spawn(executor,
                     Handshake<TlsStream>(self, std::move(socket), *scheduler, std::move(ticket)),
                     Rethrow);
    } else {
      asio::co_spawn(
          executor,
          Handshake<beast::tcp_stream>(self, std::move(socket), *scheduler, std::move(ticket)),
          Rethrow);
    }
  }

  // Re-homes `socket` on `executor`'s context; false (and the socket closed)
  // if the descriptor cannot be moved.
  static bool MoveTo(const asio::any_io_executor& executor, tcp::socket& socket) {
    beast::error_code ec;
    const auto protocol = socket.local_endpoint(ec).protocol();
    if (ec) return false;
    tcp::socket moved(executor);
    const auto fd = socket.release(ec);
    if (ec) return false;
    moved.assign(protocol, fd, ec);
    if (ec) {
      ::close(fd);
      return false;
    }
    socket = std::move(moved);
    return true;
  }

  template <class Next>
  static asio::awaitable<void> Handshake(std::shared_ptr<State> self, tcp::socket socket,
                                         Scheduler& scheduler, std::shared_ptr<void> ticket) {
    using Session = StreamSession<Next>;
    beast::error_code ignored;
    const auto peer = socket.remote_endpoint(ignored);
    auto stream = [&] {
      if constexpr (Session::kTls) {
        return typename Session::Stream(beast::tcp_stream(std::move(socket)), *self->options.tls);
      } else {
        return typename Session::Stream(beast::tcp_stream(std::move(socket)));
      }
    }();
    auto& lowest = beast::get_lowest_layer(stream);
    lowest.expires_after(std::chrono::seconds(10));
    if constexpr (Session::kTls) {
      auto [tec] = co_await stream.next_layer().async_handshake(ssl::stream_base::server, kNoThrow);
      if (tec || self->stopped) co_return;
    }
    // Read the upgrade request ourselves, to keep its target and headers.
    beast::flat_buffer buffer;
    beast::http::request<beast::http::string_body> request;
    auto [rec, rn] =
        co_await beast::http::async_read(stream.next_layer(), buffer, request, kNoThrow);
    if (rec || self->stopped || !websocket::is_upgrade(request)) co_return;
    lowest.expires_never();
    auto [ec] = co_await stream.async_accept(request, kNoThrow);
    if (ec || self->stopped) co_return;
    WebSocketChannel::Handshake handshake{
        std::string(request.target()), std::string(request[beast::http::field::authorization]),
        peer.address().to_string() + ":" + std::to_string(peer.port()),
        std::string(request[beast::http::field::origin])};
    auto session = std::make_shared<Session>(self->options.tls, std::move(stream), self->options,
                                             beast::role_type::server);
    session->ticket = std::move(ticket);
    auto channel = std::make_unique<WebSocketChannel>(scheduler, session);
    channel->set_handshake(std::move(handshake));
    session->Start();
    self->on_channel(std::move(channel));
  }
};

WebSocketListener::WebSocketListener(
    asio::any_io_executor executor, Scheduler& scheduler, const std::string& address, uint16_t port,
    std::function<void(std::unique_ptr<WebSocketChannel>)> on_channel,
    WebSocketChannel::Options options)
    : state_(std::make_shared<State>(Listen(executor, address, port), scheduler)) {
  state_->on_channel = std::move(on_channel);
  state_->options = options;
  State::Accept(state_);
}

WebSocketListener::~WebSocketListener() { Stop(); }

uint16_t WebSocketListener::port() const { return state_->acceptor.local_endpoint().port(); }

void WebSocketListener::Stop() {
  if (state_->stopped.exchange(true)) return;
  beast::error_code ignored;
  state_->acceptor.close(ignored);
}

}  // namespace aweft::sync
