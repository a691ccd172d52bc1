// An XXH64 (seed 0) taken over bytes given piece by piece: xxHash's streaming state,
// allocated by the library and freed here. ok() is false when there was no memory for it;
// what that means (an error, an exception, no hash at all) is the caller's to say.
#pragma once
#include <xxhash.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ckptfwd {

class Xxh64Stream {
 public:
  Xxh64Stream() : state_(XXH64_createState()) {
    if (state_) XXH64_reset(state_, 0);
  }
  ~Xxh64Stream() {
    if (state_) XXH64_freeState(state_);
  }
  Xxh64Stream(const Xxh64Stream&) = delete;
  Xxh64Stream& operator=(const Xxh64Stream&) = delete;

  bool ok() const { return state_ != nullptr; }
  void update(const void* p, size_t n) { XXH64_update(state_, p, n); }
  // n zero bytes: a hole of a file, which restores as zeros.
  void update_zeros(uint64_t n) {
    static const uint8_t zeros[64 * 1024] = {};
    for (uint64_t k; n > 0; n -= k) {
      k = std::min<uint64_t>(n, sizeof(zeros));
      update(zeros, static_cast<size_t>(k));
    }
  }
  uint64_t digest() const { return XXH64_digest(state_); }

 private:
  XXH64_state_t* state_;
};

}  // namespace ckptfwd
