// The accept loop every listener runs (sync/listen.h), on a real socket.

#include "sync/listen.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <ctime>
#include <vector>

namespace aweft::sync {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

double ProcessCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

TEST_CASE("out of file descriptors and without a spare, the accept loop pauses, then recovers",
          "[sync][listen][refusal]") {
#ifdef AWEFT_SANITIZED
  // A sanitizer needs descriptors of its own (it probes memory through a
  // pipe): with none left it reports errors of its own. The plain suite runs
  // this test.
  WARN("left out under a sanitizer, which needs file descriptors of its own");
  return;
#endif
  asio::io_context io;
  tcp::acceptor acceptor = Listen(io.get_executor(), "localhost", 0);
  const tcp::endpoint at(asio::ip::make_address("127.0.0.1"), acceptor.local_endpoint().port());
  std::vector<tcp::socket> accepted;
  AcceptLoop(
      acceptor, [] { return false; },
      [&](tcp::socket socket) { accepted.push_back(std::move(socket)); });
  // Two connections wait in the kernel's backlog, not yet accepted.
  std::vector<tcp::socket> dialed;
  for (int i = 0; i < 2; ++i) dialed.emplace_back(io).connect(at);

  // No descriptor left for the process: every accept fails (EMFILE). The
  // loop first runs below, so it has no spare to shed with either (the node
  // test, node_descriptors_test, covers shedding): it can only wait.
  rlimit before{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &before) == 0);
  const int next = ::open("/dev/null", O_RDONLY);
  REQUIRE(next >= 0);
  ::close(next);
  rlimit tight = before;
  tight.rlim_cur = static_cast<rlim_t>(next);
  REQUIRE(setrlimit(RLIMIT_NOFILE, &tight) == 0);
  const double cpu = ProcessCpuSeconds();
  io.run_for(std::chrono::seconds(1));
  const double spent = ProcessCpuSeconds() - cpu;
  REQUIRE(setrlimit(RLIMIT_NOFILE, &before) == 0);
  CHECK(accepted.empty());
  // A loop that retried at once would burn the whole second.
  INFO("CPU while out of descriptors: " << spent << " s");
  CHECK(spent < 0.3);

  // Descriptors again: what waited is accepted.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (accepted.size() < 2 && std::chrono::steady_clock::now() < until) {
    io.run_for(std::chrono::milliseconds(10));
  }
  CHECK(accepted.size() == 2);
}

TEST_CASE("Listen names what it cannot bind", "[sync][listen][refusal]") {
  asio::io_context io;
  tcp::acceptor taken = Listen(io.get_executor(), "127.0.0.1", 0);
  CHECK_THROWS_AS(Listen(io.get_executor(), "127.0.0.1", taken.local_endpoint().port()),
                  boost::system::system_error);
  CHECK_THROWS(Listen(io.get_executor(), "not-an-address", 0));
  tcp::acceptor six = Listen(io.get_executor(), "[::1]", 0);
  CHECK(six.local_endpoint().address().is_v6());
}

}  // namespace
}  // namespace aweft::sync
