#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

namespace aweft::sync {

// A bound on the bytes all connections of a process hold at once: messages
// partly read and messages waiting to be sent. Each connection holds a
// Holder and says what it holds; when a holder's growth takes the total past
// the limit, the largest holders are cut (their `cut` is called, once, with
// why) until the rest fit. Thread-safe: holders may live on any thread;
// `cut` is called on the thread of the holder that grew, under the budget's
// lock, so it must only post to its own.
class MemoryBudget {
 public:
  explicit MemoryBudget(uint64_t limit) : limit_(limit) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  class Holder {
   public:
    ~Holder();
    Holder(const Holder&) = delete;
    Holder& operator=(const Holder&) = delete;
    // What this connection holds now, in bytes.
    void Hold(uint64_t bytes);

   private:
    friend class MemoryBudget;
    Holder(std::shared_ptr<MemoryBudget> budget, std::function<void(const std::string&)> cut)
        : budget_(std::move(budget)), cut_(std::move(cut)) {}
    std::shared_ptr<MemoryBudget> budget_;
    std::function<void(const std::string&)> cut_;
    uint64_t bytes_ = 0;  // Under budget_->mutex_.
  };

  // A holder for one connection, holding nothing yet; `cut` ends it.
  static std::unique_ptr<Holder> Join(const std::shared_ptr<MemoryBudget>& budget,
                                      std::function<void(const std::string&)> cut);

  uint64_t limit() const { return limit_; }
  uint64_t used() const;
  // Connections cut so far.
  uint64_t cuts() const;

 private:
  struct Larger {
    bool operator()(const Holder* a, const Holder* b) const {
      return a->bytes_ != b->bytes_ ? a->bytes_ > b->bytes_ : a < b;
    }
  };

  const uint64_t limit_;
  mutable std::mutex mutex_;
  std::set<Holder*, Larger> holders_;  // Largest first; those not cut yet.
  uint64_t used_ = 0, cuts_ = 0;
  uint64_t doomed_ = 0;  // Of used_, what holders cut and not yet gone hold.
};

}  // namespace aweft::sync
