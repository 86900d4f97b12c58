#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "admin/router.h"

namespace boost::asio::ssl {
class context;
}

namespace aweft::admin {

// A small HTTP/1.1 server (Boost.Beast, in http_server.cc only) that hands
// every request to `handler` and writes what it returns, over TCP or TLS. Keep-alive, a
// bounded body, idle connections closed after 30 s. Lives on the executor's
// thread, so the handler runs there too, one request at a time; a response
// whose `later` is set is completed on the server's own worker thread (one,
// answers in turn) while the executor goes on, then written.
class HttpServer {
 public:
  using Handler = std::function<Response(const Request&)>;

  struct Options {
    // The largest request body read; a larger one is answered 413.
    // Default: 64 MiB.
    size_t max_body = 64 << 20;
    // When set (sync::ServerTls), every connection is HTTPS. Default: null.
    std::shared_ptr<boost::asio::ssl::context> tls;
  };

  // Binds `address`:`port` (0 picks one) and starts accepting. Throws
  // std::system_error when the address cannot be bound.
  HttpServer(boost::asio::any_io_executor executor, const std::string& address, uint16_t port,
             Handler handler, Options options);
  HttpServer(boost::asio::any_io_executor executor, const std::string& address, uint16_t port,
             Handler handler)
      : HttpServer(std::move(executor), address, port, std::move(handler), Options{}) {}
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const;

  // Stops accepting and closes every connection; the handler is not called
  // again, and no `later` runs after it returns (one running is waited for).
  void Stop();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace aweft::admin
