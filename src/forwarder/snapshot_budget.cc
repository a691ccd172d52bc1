#include "forwarder/snapshot_budget.h"

namespace ckptfwd::fwd {

std::atomic<uint64_t> SnapshotReadBudget::in_use_{0};

SnapshotReadBudget::~SnapshotReadBudget() {
  if (taken_) in_use_.fetch_sub(taken_);
}

bool SnapshotReadBudget::take(uint64_t n) {
  uint64_t used = in_use_.load();
  do {
    if (n > max_ || used > max_ - n) return false;
  } while (!in_use_.compare_exchange_weak(used, used + n));
  taken_ += n;
  return true;
}

}  // namespace ckptfwd::fwd
