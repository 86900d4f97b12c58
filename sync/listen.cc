#include "sync/listen.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

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

// A descriptor held in reserve, released to accept (and close) connections
// when the process has none left: the classic way out of EMFILE.
class Spare {
 public:
  Spare() : fd_(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {}
  ~Spare() {
    if (fd_ >= 0) ::close(fd_);
  }
  Spare(const Spare&) = delete;
  Spare& operator=(const Spare&) = delete;

  // Closes the connections waiting on `listener` (at most 1,024), the spare
  // lent for each; how many. 0 when there is no spare to lend.
  size_t Shed(int listener) {
    if (fd_ < 0) fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // Lost last time.
    size_t shed = 0;
    while (fd_ >= 0 && shed < 1024) {
      ::close(fd_);
      const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) {
        ::close(fd);
        ++shed;
      }
      fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0) break;  // None waiting (EAGAIN), or none to be had.
    }
    return shed;
  }

 private:
  int fd_;
};

asio::awaitable<void> Accepting(tcp::acceptor& acceptor, std::function<bool()> stopped,
                                std::function<void(tcp::socket)> take,
                                std::function<void(size_t)> on_shed) {
  constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
  Spare spare;
  while (!stopped()) {
    auto [ec, socket] = co_await acceptor.async_accept(kNoThrow);
    if (stopped() || ec == asio::error::operation_aborted) break;
    if (!ec) {
      take(std::move(socket));
      continue;
    }
    const bool out_of_descriptors = ec == asio::error::no_descriptors ||
                                    ec == boost::system::errc::too_many_files_open_in_system;
    const size_t shed = out_of_descriptors ? spare.Shed(acceptor.native_handle()) : 0;
    if (shed > 0) {
      if (on_shed) on_shed(shed);
      continue;
    }
    asio::steady_timer pause(acceptor.get_executor(), std::chrono::milliseconds(100));
    (void)co_await pause.async_wait(kNoThrow);
  }
}

}  // namespace

// Spawned from here, not awaited inside another coroutine: GCC 12 destroys
// temporaries in a co_await's full expression twice.
void AcceptLoop(tcp::acceptor& acceptor, std::function<bool()> stopped,
                std::function<void(tcp::socket)> take, std::function<void(size_t)> shed) {
  asio::co_spawn(acceptor.get_executor(),
                 Accepting(acceptor, std::move(stopped), std::move(take), std::move(shed)),
                 [](std::exception_ptr e) {
                   if (e) std::rethrow_exception(e);  // Fail-stop, never silently.
                 });
}

}  // namespace aweft::sync
