#include "sync/listen.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <exception>

namespace aweft::sync {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

tcp::acceptor Listen(asio::any_io_executor executor, const std::string& address, uint16_t port) {
  std::string host = address == "localhost" ? "127.0.0.1" : address;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const tcp::endpoint endpoint(asio::ip::make_address(host), port);
  tcp::acceptor acceptor(executor);
  acceptor.open(endpoint.protocol());
  acceptor.set_option(asio::socket_base::reuse_address(true));
  acceptor.bind(endpoint);
  acceptor.listen();
  return acceptor;
}

namespace {

asio::awaitable<void> Accepting(tcp::acceptor& acceptor, std::function<bool()> stopped,
                                std::function<void(tcp::socket)> take) {
  constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
  while (!stopped()) {
    auto [ec, socket] = co_await acceptor.async_accept(kNoThrow);
    if (stopped() || ec == asio::error::operation_aborted) break;
    if (ec) {
      asio::steady_timer pause(acceptor.get_executor(), std::chrono::milliseconds(100));
      (void)co_await pause.async_wait(kNoThrow);
      continue;
    }
    take(std::move(socket));
  }
}

}  // namespace

// Spawned from here, not awaited inside another coroutine: GCC 12 destroys
// temporaries in a co_await's full expression twice.
void AcceptLoop(tcp::acceptor& acceptor, std::function<bool()> stopped,
                std::function<void(tcp::socket)> take) {
  asio::co_spawn(acceptor.get_executor(), Accepting(acceptor, std::move(stopped), std::move(take)),
                 [](std::exception_ptr e) {
                   if (e) std::rethrow_exception(e);  // Fail-stop, never silently.
                 });
}

}  // namespace aweft::sync
