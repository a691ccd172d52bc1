#include "forwarder/pipeline/batch_budget.h"

namespace ckptfwd::fwd {

BatchBudget::Pool BatchBudget::snapshot_reads{0};
BatchBudget::Pool BatchBudget::resident_batches{0};

BatchBudget::~BatchBudget() {
  if (taken_) pool_.fetch_sub(taken_);
}

bool BatchBudget::take(uint64_t n) {
  uint64_t used = pool_.load();
  do {
    if (n > max_ || used > max_ - n) return false;
  } while (!pool_.compare_exchange_weak(used, used + n));
  taken_ += n;
  return true;
}

}  // namespace ckptfwd::fwd
