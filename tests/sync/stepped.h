#pragma once

#include <cstddef>
#include <deque>
#include <functional>

#include "sync/channel.h"

namespace aweft::sync::testing {

// ManualScheduler drains everything or nothing; this one can also run a few
// pieces of work, so frames arrive part-way through other ends' edits.
class SteppedScheduler : public Scheduler {
 public:
  void Post(std::function<void()> work) override { queue_.push_back(std::move(work)); }

  void Step(size_t steps) {
    for (; steps > 0 && !queue_.empty(); --steps) RunOne();
  }
  // False if work is still left after `limit` pieces (a livelock).
  bool RunUntilIdle(size_t limit) {
    for (; limit > 0 && !queue_.empty(); --limit) RunOne();
    return queue_.empty();
  }

 private:
  void RunOne() {
    auto work = std::move(queue_.front());
    queue_.pop_front();
    work();
  }
  std::deque<std::function<void()>> queue_;
};

}  // namespace aweft::sync::testing
