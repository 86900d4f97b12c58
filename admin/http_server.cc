// The admin endpoint's HTTP server: an accept loop and one coroutine per
// connection (plain or TLS), on the node's executor. What it does to each message between
// reading and writing is in http_message.cc.

#include "admin/http_server.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <chrono>
#include <exception>
#include <map>
#include <type_traits>

#include "admin/detail/http_message.h"
#include "sync/listen.h"

namespace aweft::admin {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
constexpr auto kIdle = std::chrono::seconds(30);

// Builds a deferred answer on the executor it is spawned on.
asio::awaitable<Response> Build(std::function<Response()> later) { co_return later(); }

// A coroutine that throws stops the process (fail-stop), never silently.
void Rethrow(std::exception_ptr e) {
  if (e) std::rethrow_exception(e);
}

}  // namespace

struct HttpServer::State : std::enable_shared_from_this<State> {
  explicit State(tcp::acceptor acceptor) : acceptor(std::move(acceptor)) {}

  tcp::acceptor acceptor;
  Handler handler;
  Options options;
  bool stopped = false;
  std::map<uint64_t, beast::tcp_stream*> open;  // Connections, to close on Stop().
  uint64_t next = 1;
  asio::thread_pool worker{1};  // Runs each Response::later.

  static void Accept(const std::shared_ptr<State>& self) {
    sync::AcceptLoop(
        self->acceptor, [state = self.get()] { return state->stopped; },
        [self](tcp::socket socket) {
          auto executor = self->acceptor.get_executor();
          beast::tcp_stream stream(std::move(socket));
          if (self->options.tls) {
            asio::co_spawn(executor, Serve(self, TlsStream(std::move(stream), *self->options.tls)),
                           Rethrow);
          } else {
            asio::co_spawn(executor, Serve(self, std::move(stream)), Rethrow);
          }
        });
  }

  // One connection, plain (beast::tcp_stream) or TLS (TlsStream).
  template <class Stream>
  static asio::awaitable<void> Serve(std::shared_ptr<State> self, Stream stream) {
    constexpr bool kTls = std::is_same_v<Stream, TlsStream>;
    beast::tcp_stream& lowest = beast::get_lowest_layer(stream);
    const uint64_t id = self->next++;
    self->open[id] = &lowest;
    if constexpr (kTls) {
      lowest.expires_after(kIdle);
      auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, kNoThrow);
      if (ec || self->stopped) {
        self->open.erase(id);
        co_return;
      }
    }
    beast::flat_buffer buffer;
    while (!self->stopped) {
      lowest.expires_after(kIdle);
      detail::RequestParser parser;
      detail::Bound(parser, self->options.max_body);
      auto [ec, n] = co_await http::async_read(stream, buffer, parser, kNoThrow);
      if (ec == http::error::body_limit) {
        auto response = detail::ToBeast(detail::TooLarge(self->options.max_body),
                                        parser.get().version(), false);
        response.keep_alive(false);
        (void)co_await http::async_write(stream, response, kNoThrow);
        break;
      }
      if (ec || self->stopped) break;  // Closed, timed out, or not HTTP.
      const detail::BeastRequest& in = parser.get();
      Response answer = self->handler(detail::FromBeast(in));
      if (answer.later) {
        // Not a coroutine lambda with captures: built by GCC 12, the node
        // crashed here in that lambda's destructor.
        std::function<Response()> later = std::move(answer.later);
        answer =
            co_await asio::co_spawn(self->worker, Build(std::move(later)), asio::use_awaitable);
        if (self->stopped) break;
      }
      auto response =
          detail::ToBeast(std::move(answer), in.version(), in.method() == http::verb::head);
      response.keep_alive(in.keep_alive());
      auto [wec, written] = co_await http::async_write(stream, response, kNoThrow);
      if (wec || !response.keep_alive()) break;
    }
    if constexpr (kTls) {
      if (!self->stopped) {
        lowest.expires_after(std::chrono::seconds(5));
        (void)co_await stream.async_shutdown(kNoThrow);
      }
    } else {
      beast::error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }
    self->open.erase(id);
  }
};

HttpServer::HttpServer(asio::any_io_executor executor, const std::string& address, uint16_t port,
                       Handler handler, Options options)
    : state_(std::make_shared<State>(sync::Listen(executor, address, port))) {
  state_->handler = std::move(handler);
  state_->options = options;
  State::Accept(state_);
}

HttpServer::~HttpServer() { Stop(); }

uint16_t HttpServer::port() const {
  beast::error_code ec;
  return state_->acceptor.local_endpoint(ec).port();
}

void HttpServer::Stop() {
  if (state_->stopped) return;
  state_->stopped = true;
  beast::error_code ignored;
  state_->acceptor.close(ignored);
  for (auto& [id, stream] : state_->open) stream->socket().close(ignored);
  // Not stop(): the answer being built must still hand its result back, or
  // its connection's coroutine would keep the loop's work count forever.
  state_->worker.join();
}

}  // namespace aweft::admin
