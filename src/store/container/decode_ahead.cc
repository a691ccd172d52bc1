#include "store/container/decode_ahead.h"

#include <system_error>
#include <utility>

namespace ckptfwd {

DecodeAhead::DecodeAhead(size_t n, unsigned helpers, size_t window, Decode decode)
    : decode_(std::move(decode)), window_(window < 1 ? 1 : window), slots_(n) {
  if (n < 2) return;  // nothing to overlap
  for (unsigned t = 0; t < helpers; ++t) {
    try {
      threads_.emplace_back([this] { helper(); });
    } catch (const std::system_error&) {
      break;  // no more threads: the walk decodes what no helper takes
    }
  }
}

DecodeAhead::~DecodeAhead() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  room_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void DecodeAhead::helper() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    ++helpers_waiting_;
    room_cv_.wait(lk, [&] {
      return stop_ || next_claim_ >= slots_.size() || next_claim_ < taken_ + window_;
    });
    --helpers_waiting_;
    if (stop_ || next_claim_ >= slots_.size()) return;
    size_t k = next_claim_++;
    lk.unlock();
    std::string err;
    Bytes b = decode_(k, &err);
    lk.lock();
    slots_[k].bytes = std::move(b);
    slots_[k].err = std::move(err);
    slots_[k].done = true;
    if (walker_waits_for_ == k) done_cv_.notify_one();
  }
}

DecodeAhead::Bytes DecodeAhead::take(size_t k, std::string* err) {
  std::unique_lock<std::mutex> lk(mu_);
  Bytes b;
  if (k >= slots_.size()) {
    if (err) *err = "chunk " + std::to_string(k) + " was not announced to the decoder";
    return nullptr;
  }
  if (next_claim_ <= k) {  // no helper got this far: decode it here
    next_claim_ = k + 1;
    lk.unlock();
    b = decode_(k, err);
    lk.lock();
  } else {
    walker_waits_for_ = k;
    done_cv_.wait(lk, [&] { return slots_[k].done; });
    walker_waits_for_ = SIZE_MAX;
    b = std::move(slots_[k].bytes);
    if (!b && err) *err = std::move(slots_[k].err);
    slots_[k] = Slot{};
  }
  if (k + 1 > taken_) taken_ = k + 1;
  // The window moved by one: one waiting helper may claim the chunk it let in.
  if (helpers_waiting_ > 0 && next_claim_ < slots_.size() && next_claim_ < taken_ + window_)
    room_cv_.notify_one();
  return b;
}

}  // namespace ckptfwd
