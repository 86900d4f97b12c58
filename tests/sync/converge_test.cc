// Convergence in process (behaviour.md §7 item 30): whatever order a handful
// of ends write in, they all end at one document.

#include "tests/sync/converge.h"

#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "sync/channel.h"
#include "tests/sync/stepped.h"

namespace aweft::sync::testing {
namespace {

class InProcess : public Network {
 public:
  Scheduler& scheduler() override { return scheduler_; }
  std::pair<std::unique_ptr<Channel>, std::unique_ptr<Channel>> Join() override {
    return InProcessPair(scheduler_);
  }
  void Step(size_t steps) override { scheduler_.Step(steps); }
  bool Settle(const std::function<bool()>& quiet) override {
    return scheduler_.RunUntilIdle(1'000'000) && quiet();
  }

 private:
  SteppedScheduler scheduler_;
};

TEST_CASE("named shapes converge in process", "[sync][converge]") {
  const Shape named[] = {
      {20260903, false, 3, 90, false}, {20260903, true, 4, 90, false},
      {424242, false, 5, 90, false},   {7, true, 5, 90, true},
      {909090, false, 4, 90, true},
  };
  for (const Shape& shape : named) {
    InProcess network;
    const Outcome outcome = Converge(network, shape);
    INFO(Describe(shape));
    for (const auto& failure : outcome.failures) FAIL_CHECK(failure);
    CHECK(outcome.failures.empty());
    // The refusal path ran: end 0 turned sealed writes away and end 1 yielded.
    CHECK(outcome.refusals > 0);
    CHECK(outcome.yields == outcome.refusals);
    if (shape.cuts) CHECK(outcome.cuts > 0);
  }
}

// A fifth of the seeds under a sanitizer, which runs them slower (CI's
// time goes to its builds and its slowest tests).
#ifdef AWEFT_SANITIZED
constexpr uint64_t kSweepSeeds = 100;
#else
constexpr uint64_t kSweepSeeds = 500;
#endif

TEST_CASE("the convergence sweep: 500 seeds (100 under a sanitizer) over both shapes",
          "[sync][converge]") {
  size_t failed = 0, refusals = 0, cuts = 0, resyncs = 0;
  for (uint64_t seed = 1; seed <= kSweepSeeds; ++seed) {
    const Shape shape{seed, seed % 2 == 1, 3 + static_cast<int>(seed % 3), 60, seed % 4 == 0};
    InProcess network;
    const Outcome outcome = Converge(network, shape);
    refusals += outcome.refusals;
    cuts += outcome.cuts;
    resyncs += outcome.resyncs;
    if (outcome.failures.empty()) continue;
    ++failed;
    FAIL_CHECK(Describe(shape) + ": " + outcome.failures.front());
  }
  INFO("refusals " << refusals << ", cuts " << cuts << ", resyncs " << resyncs);
  CHECK(failed == 0);
  CHECK(refusals > 0);
  CHECK(cuts > 0);
}

}  // namespace
}  // namespace aweft::sync::testing
