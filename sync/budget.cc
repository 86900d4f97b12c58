#include "sync/budget.h"

namespace aweft::sync {

std::unique_ptr<MemoryBudget::Holder> MemoryBudget::Join(
    const std::shared_ptr<MemoryBudget>& budget, std::function<void(const std::string&)> cut) {
  std::unique_ptr<Holder> holder(new Holder(budget, std::move(cut)));
  std::lock_guard lock(budget->mutex_);
  budget->holders_.insert(holder.get());
  return holder;
}

MemoryBudget::Holder::~Holder() {
  std::lock_guard lock(budget_->mutex_);
  if (budget_->holders_.erase(this) == 0) budget_->doomed_ -= bytes_;
  budget_->used_ -= bytes_;
}

void MemoryBudget::Holder::Hold(uint64_t bytes) {
  MemoryBudget& budget = *budget_;
  std::lock_guard lock(budget.mutex_);
  const bool listed = budget.holders_.erase(this) > 0;  // Not when cut already.
  budget.used_ = budget.used_ - bytes_ + bytes;
  if (!listed) budget.doomed_ = budget.doomed_ - bytes_ + bytes;
  const bool grew = bytes > bytes_;
  bytes_ = bytes;
  if (!listed) return;
  budget.holders_.insert(this);
  // Past the limit: the largest go first, until what stays fits. What those
  // cut hold counts until they end, but not against the rest. Called under
  // the lock, so no holder cut here is destroyed meanwhile: `cut` only posts.
  while (grew && budget.used_ - budget.doomed_ > budget.limit_ && !budget.holders_.empty()) {
    Holder* largest = *budget.holders_.begin();
    budget.holders_.erase(budget.holders_.begin());
    budget.doomed_ += largest->bytes_;
    ++budget.cuts_;
    largest->cut_("the node's connections hold more than " + std::to_string(budget.limit_) +
                  " bytes, and this one held " + std::to_string(largest->bytes_) +
                  ", among the most (limits.memory_bytes)");
  }
}

uint64_t MemoryBudget::used() const {
  std::lock_guard lock(mutex_);
  return used_;
}

uint64_t MemoryBudget::cuts() const {
  std::lock_guard lock(mutex_);
  return cuts_;
}

}  // namespace aweft::sync
