#include "forwarder/state/early_start_check.h"

#include <utility>

namespace ckptfwd::fwd {

void EarlyStartCheck::arm(uint64_t own, std::function<void()> retire) {
  std::lock_guard lk(mu_);
  own_ = own;
  retire_ = std::move(retire);
  state_ = State::kTentative;
}

EarlyStartCheck::Verdict EarlyStartCheck::hello(bool has_digest, uint64_t digest) {
  std::function<void()> retire;
  {
    std::lock_guard lk(mu_);
    if (state_ == State::kRetiring) return Verdict::kRetire;
    if (state_ != State::kTentative || !has_digest) return Verdict::kServe;
    if (digest == own_) {
      state_ = State::kSettled;
      return Verdict::kServe;
    }
    state_ = State::kRetiring;
    retire.swap(retire_);
  }
  if (retire) retire();
  return Verdict::kRetire;
}

bool EarlyStartCheck::retiring() {
  std::lock_guard lk(mu_);
  return state_ == State::kRetiring;
}

}  // namespace ckptfwd::fwd
