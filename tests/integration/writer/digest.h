// A 64-bit FNV-1a digest, so read-back output can be compared between a run with and
// without the library without depending on any hash library (the writer links nothing).
#pragma once
#include <cstddef>
#include <cstdint>

namespace ckpt_writer {

class Digest {
 public:
  void update(const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
      h_ ^= p[i];
      h_ *= 1099511628211ull;
    }
    size_ += n;
  }
  uint64_t value() const { return h_; }
  uint64_t size() const { return size_; }

 private:
  uint64_t h_ = 14695981039346656037ull;
  uint64_t size_ = 0;
};

}  // namespace ckpt_writer
