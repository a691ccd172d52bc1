#include "forwarder/pipeline/trial_budget.h"

#include <algorithm>
#include <numeric>

namespace ckptfwd::fwd {

namespace {
// The screening of every candidate and the cube, about the same for any sample size.
constexpr uint64_t kTrialFixedCost = 192 << 10;
// A quick trial (measured 0.17-0.25 ms on the NCAR fields).
constexpr uint64_t kQuickCost = 64 << 10;
}  // namespace

uint64_t trial_cost(uint64_t n, uint64_t max_sample) {
  return kTrialFixedCost + std::min(n, max_sample) / 2;
}

uint64_t quick_block(uint64_t n) {
  return n < kQuickMinBytes ? 0 : std::clamp<uint64_t>(n / 32, 4 << 10, 16 << 10);
}

uint64_t quick_cost(uint64_t n) { return quick_block(n) ? kQuickCost : 0; }

std::vector<bool> trials_now(const std::vector<uint64_t>& sizes, uint64_t batch_bytes,
                             uint64_t max_sample) {
  std::vector<size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  const auto budget = std::max<uint64_t>(
      kMinTrialBudget, static_cast<uint64_t>(kTrialShare * static_cast<double>(batch_bytes)));
  uint64_t spent = 0;  // every stream gets at least its quick trial
  for (uint64_t n : sizes) spent += quick_cost(n);
  std::vector<bool> now(sizes.size(), false);
  for (size_t i : order) {
    const uint64_t cost = trial_cost(sizes[i], max_sample), more = cost - quick_cost(sizes[i]);
    const bool pays_for_itself = cost <= kTrialShare * static_cast<double>(sizes[i]);
    if (!pays_for_itself && spent + more > budget) continue;  // a smaller one may still fit
    spent += more;
    now[i] = true;
  }
  return now;
}

}  // namespace ckptfwd::fwd
