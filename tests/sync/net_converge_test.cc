// The convergence scenario (behaviour.md §7 item 30) over real sockets on
// loopback: every link is a WebSocket or TCP connection, all on one
// io_context.

#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "tests/sync/converge.h"
#include "tests/sync/loopback.h"

namespace aweft::sync::testing {
namespace {

template <typename Socket>
class SocketNetwork : public Network {
 public:
  Scheduler& scheduler() override { return net_.scheduler; }

  std::pair<std::unique_ptr<Channel>, std::unique_ptr<Channel>> Join() override {
    auto [dialed, accepted] = net_.Join();
    return {std::move(dialed), std::move(accepted)};
  }

  void Step(size_t steps) override {
    net_.io.restart();
    for (; steps > 0 && net_.io.poll_one() > 0; --steps) {
    }
  }

  // Quiet when nothing is ready to run and every frame sent has arrived.
  bool Settle(const std::function<bool()>& quiet) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      net_.io.restart();
      if (net_.io.poll() > 0) continue;
      if (quiet()) return true;
      net_.io.restart();
      net_.io.run_one_for(std::chrono::milliseconds(5));
    }
    return false;
  }

 private:
  Loopback<Socket> net_;
};

TEMPLATE_TEST_CASE("ten seeds converge over sockets on loopback", "[sync][converge][net]",
                   WebSocketKind, TcpKind) {
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    // Both shapes, 3 to 5 ends, a cut every other seed.
    const Shape shape{seed * 7919, seed % 2 == 1, 3 + static_cast<int>(seed % 3), 60,
                      seed % 2 == 0};
    SocketNetwork<TestType> network;
    const Outcome outcome = Converge(network, shape);
    INFO(Describe(shape));
    for (const auto& failure : outcome.failures) FAIL_CHECK(failure);
    CHECK(outcome.failures.empty());
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
}

}  // namespace
}  // namespace aweft::sync::testing
