// Byte-level transforms: byte order, shuffle, byte delta.
#include "codec/load_store.h"
#include "codec/transforms.h"

namespace ckptfwd::codec::chain {

void swap_bytes(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w) {
  switch (w) {
    case 2:
      for (uint64_t i = 0; i < m; ++i)
        store<uint16_t>(out + 2 * i, __builtin_bswap16(load<uint16_t>(in + 2 * i)));
      return;
    case 4:
      for (uint64_t i = 0; i < m; ++i)
        store<uint32_t>(out + 4 * i, __builtin_bswap32(load<uint32_t>(in + 4 * i)));
      return;
    case 8:
      for (uint64_t i = 0; i < m; ++i)
        store<uint64_t>(out + 8 * i, __builtin_bswap64(load<uint64_t>(in + 8 * i)));
      return;
    default:
      for (uint64_t i = 0; i < m; ++i)
        for (uint32_t b = 0; b < w; ++b) out[i * w + b] = in[i * w + (w - 1 - b)];
  }
}

namespace {
// Fixed widths let the compiler unroll the inner loop.
template <uint32_t W>
void shuffle_fixed(const uint8_t* in, uint8_t* out, uint64_t m) {
  for (uint64_t i = 0; i < m; ++i)
    for (uint32_t b = 0; b < W; ++b) out[b * m + i] = in[i * W + b];
}
template <uint32_t W>
void unshuffle_fixed(const uint8_t* in, uint8_t* out, uint64_t m) {
  for (uint64_t i = 0; i < m; ++i)
    for (uint32_t b = 0; b < W; ++b) out[i * W + b] = in[b * m + i];
}
}  // namespace

void shuffle(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w) {
  switch (w) {
    case 2:
      return shuffle_fixed<2>(in, out, m);
    case 4:
      return shuffle_fixed<4>(in, out, m);
    case 8:
      return shuffle_fixed<8>(in, out, m);
    default:
      for (uint64_t i = 0; i < m; ++i)
        for (uint32_t b = 0; b < w; ++b) out[b * m + i] = in[i * w + b];
  }
}

void unshuffle(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w) {
  switch (w) {
    case 2:
      return unshuffle_fixed<2>(in, out, m);
    case 4:
      return unshuffle_fixed<4>(in, out, m);
    case 8:
      return unshuffle_fixed<8>(in, out, m);
    default:
      for (uint64_t i = 0; i < m; ++i)
        for (uint32_t b = 0; b < w; ++b) out[i * w + b] = in[b * m + i];
  }
}

void byte_delta(const uint8_t* in, uint8_t* out, uint64_t n) {
  uint8_t prev = 0;
  for (uint64_t i = 0; i < n; ++i) {
    out[i] = static_cast<uint8_t>(in[i] - prev);
    prev = in[i];
  }
}

void byte_undelta(const uint8_t* in, uint8_t* out, uint64_t n) {
  uint8_t prev = 0;
  for (uint64_t i = 0; i < n; ++i) out[i] = prev = static_cast<uint8_t>(in[i] + prev);
}

}  // namespace ckptfwd::codec::chain
