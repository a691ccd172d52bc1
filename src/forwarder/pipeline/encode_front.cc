#include "forwarder/pipeline/encode_front.h"

#include <algorithm>

namespace ckptfwd::fwd {

EncodeFront::EncodeFront(std::vector<RecheckGate::StreamChunks> streams, size_t chunks)
    : streams_(std::move(streams)), done_(chunks, 0), left_(chunks) {}

void EncodeFront::encoded(size_t j) {
  std::lock_guard lk(mu_);
  if (j >= done_.size() || done_[j]) return;
  done_[j] = 1;
  --left_;
  cv_.notify_all();
}

bool EncodeFront::all_encoded() const {
  std::lock_guard lk(mu_);
  return left_ == 0;
}

bool EncodeFront::wait(uint32_t s, uint64_t off, uint64_t n) {
  if (s >= streams_.size() || n == 0) return true;
  const RecheckGate::StreamChunks& sc = streams_[s];
  if (sc.chunk_len == 0) return true;  // a stream without chunks has no bytes
  const size_t first = sc.first + off / sc.chunk_len;
  const size_t last = std::min(sc.first + (off + n - 1) / sc.chunk_len + 1, done_.size());
  std::unique_lock lk(mu_);
  for (size_t j = first; j < last; ++j) {
    cv_.wait(lk, [&] { return done_[j] || abandoned_; });
    if (!done_[j]) return false;  // (abandoned)
  }
  return true;
}

bool EncodeFront::wait_all() {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return left_ == 0 || abandoned_; });
  return left_ == 0;
}

void EncodeFront::abandon() {
  std::lock_guard lk(mu_);
  abandoned_ = true;
  cv_.notify_all();
}

}  // namespace ckptfwd::fwd
