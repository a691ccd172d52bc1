#include "wire/read_link.h"

#include <cstdio>
#include <cstring>

namespace ckptfwd::wire {
namespace {

constexpr uint64_t kMul1 = 0x87c37b91114253d5ull;
constexpr uint64_t kMul2 = 0x4cf5ad432745937full;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t fmix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

// A lane's 8 input bytes scrambled: k * a, rotated by r, * b.
inline uint64_t scramble(uint64_t k, uint64_t a, int r, uint64_t b) { return rotl(k * a, r) * b; }

// MurmurHash3's x64 128-bit body and finalisation (the published algorithm).
void murmur128(const unsigned char* p, size_t n, uint64_t out[2]) {
  uint64_t h1 = 0x6b7066776b706677ull, h2 = 0x637074637074ull;  // fixed seeds
  size_t blocks = n / 16;
  for (size_t i = 0; i < blocks; ++i) {
    uint64_t k1, k2;
    memcpy(&k1, p + i * 16, 8);
    memcpy(&k2, p + i * 16 + 8, 8);
    h1 = (rotl(h1 ^ scramble(k1, kMul1, 31, kMul2), 27) + h2) * 5 + 0x52dce729;
    h2 = (rotl(h2 ^ scramble(k2, kMul2, 33, kMul1), 31) + h1) * 5 + 0x38495ab5;
  }
  const unsigned char* tail = p + blocks * 16;
  uint64_t k1 = 0, k2 = 0;
  for (size_t i = n & 15; i > 8; --i) k2 |= static_cast<uint64_t>(tail[i - 1]) << ((i - 9) * 8);
  for (size_t i = (n & 15) < 8 ? (n & 15) : 8; i > 0; --i)
    k1 |= static_cast<uint64_t>(tail[i - 1]) << ((i - 1) * 8);
  h2 ^= scramble(k2, kMul2, 33, kMul1);
  h1 ^= scramble(k1, kMul1, 31, kMul2);
  h1 ^= n;
  h2 ^= n;
  h1 += h2;
  h2 += h1;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h1 += h2;
  h2 += h1;
  out[0] = h1;
  out[1] = h2;
}

}  // namespace

void read_link_hash(const char* path, char out[33]) {
  uint64_t h[2];
  murmur128(reinterpret_cast<const unsigned char*>(path), strlen(path), h);
  snprintf(out, 33, "%016llx%016llx", static_cast<unsigned long long>(h[0]),
           static_cast<unsigned long long>(h[1]));
}

bool read_link_name(const char* dir, const char* path, uint64_t gen, char* out, size_t cap) {
  char hash[33];
  read_link_hash(path, hash);
  int n = snprintf(out, cap, "%s/%s%s.%llx.data", dir, kReadLinkPrefix, hash,
                   static_cast<unsigned long long>(gen));
  return n > 0 && static_cast<size_t>(n) < cap;
}

}  // namespace ckptfwd::wire
