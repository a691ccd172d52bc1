// Byte-level transforms: byte order, shuffle, byte delta.
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "codec/chain/load_store.h"
#include "codec/chain/transforms.h"

namespace ckptfwd::codec::chain {

void swap_bytes(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w) {
  switch (w) {
    case 2:
      for (uint64_t i = 0; i < m; ++i)
        store<uint16_t>(out + 2 * i, __builtin_bswap16(load<uint16_t>(in + 2 * i)));
      return;
    case 4: {
      uint64_t i = 0;
#if defined(__SSE2__)
      for (; i + 4 <= m; i += 4) {
        __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 4 * i));
        v = _mm_or_si128(_mm_slli_epi16(v, 8), _mm_srli_epi16(v, 8));
        v = _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, 0xB1), 0xB1);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4 * i), v);
      }
#endif
      for (; i < m; ++i)
        store<uint32_t>(out + 4 * i, __builtin_bswap32(load<uint32_t>(in + 4 * i)));
      return;
    }
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
void shuffle_fixed(const uint8_t* in, uint8_t* out, uint64_t m, uint64_t i0, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i)
    for (uint32_t b = 0; b < W; ++b) out[b * m + i0 + i] = in[i * W + b];
}
template <uint32_t W>
void unshuffle_fixed(const uint8_t* in, uint8_t* out, uint64_t m, uint64_t i0, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i)
    for (uint32_t b = 0; b < W; ++b) out[i * W + b] = in[b * m + i0 + i];
}

#if defined(__SSE2__)
// Byte transposes with SSE2 (part of every x86-64, so no -march is needed): 16 elements
// per iteration, interleaved with unpack instructions, one level per doubling of the width.
// The scalar loop above does the last n % 16 elements.
inline __m128i ld(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
inline void st(uint8_t* p, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }

uint64_t unshuffle2_sse2(const uint8_t* in, uint8_t* out, uint64_t m, uint64_t i0, uint64_t n) {
  const uint8_t *p0 = in + i0, *p1 = in + m + i0;
  uint64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m128i a = ld(p0 + j), b = ld(p1 + j);
    st(out + 2 * j, _mm_unpacklo_epi8(a, b));
    st(out + 2 * j + 16, _mm_unpackhi_epi8(a, b));
  }
  return j;
}

uint64_t unshuffle4_sse2(const uint8_t* in, uint8_t* out, uint64_t m, uint64_t i0, uint64_t n) {
  const uint8_t* p = in + i0;
  uint64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m128i b0 = ld(p + j), b1 = ld(p + m + j), b2 = ld(p + 2 * m + j), b3 = ld(p + 3 * m + j);
    __m128i l01 = _mm_unpacklo_epi8(b0, b1), h01 = _mm_unpackhi_epi8(b0, b1);
    __m128i l23 = _mm_unpacklo_epi8(b2, b3), h23 = _mm_unpackhi_epi8(b2, b3);
    uint8_t* o = out + 4 * j;
    st(o, _mm_unpacklo_epi16(l01, l23));
    st(o + 16, _mm_unpackhi_epi16(l01, l23));
    st(o + 32, _mm_unpacklo_epi16(h01, h23));
    st(o + 48, _mm_unpackhi_epi16(h01, h23));
  }
  return j;
}

uint64_t unshuffle8_sse2(const uint8_t* in, uint8_t* out, uint64_t m, uint64_t i0, uint64_t n) {
  const uint8_t* p = in + i0;
  uint64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    __m128i b[8];
    for (int k = 0; k < 8; ++k) b[k] = ld(p + k * m + j);
    // Pairs of bytes (elements 0-7 in lo, 8-15 in hi), then groups of 4, then of 8.
    __m128i l01 = _mm_unpacklo_epi8(b[0], b[1]), h01 = _mm_unpackhi_epi8(b[0], b[1]);
    __m128i l23 = _mm_unpacklo_epi8(b[2], b[3]), h23 = _mm_unpackhi_epi8(b[2], b[3]);
    __m128i l45 = _mm_unpacklo_epi8(b[4], b[5]), h45 = _mm_unpackhi_epi8(b[4], b[5]);
    __m128i l67 = _mm_unpacklo_epi8(b[6], b[7]), h67 = _mm_unpackhi_epi8(b[6], b[7]);
    __m128i q[8] = {_mm_unpacklo_epi16(l01, l23), _mm_unpackhi_epi16(l01, l23),
                    _mm_unpacklo_epi16(h01, h23), _mm_unpackhi_epi16(h01, h23),
                    _mm_unpacklo_epi16(l45, l67), _mm_unpackhi_epi16(l45, l67),
                    _mm_unpacklo_epi16(h45, h67), _mm_unpackhi_epi16(h45, h67)};
    uint8_t* o = out + 8 * j;
    for (int k = 0; k < 4; ++k) {
      st(o + 32 * k, _mm_unpacklo_epi32(q[k], q[k + 4]));
      st(o + 32 * k + 16, _mm_unpackhi_epi32(q[k], q[k + 4]));
    }
  }
  return j;
}

// The forward direction, 4-byte elements: byte unpacks sort the 64 bytes of 16 elements
// by their position in the element.
uint64_t shuffle4_sse2(const uint8_t* in, uint8_t* out, uint64_t m, uint64_t i0, uint64_t n) {
  uint8_t* p = out + i0;
  uint64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const uint8_t* s = in + 4 * j;
    __m128i a = ld(s), b = ld(s + 16), c = ld(s + 32), d = ld(s + 48);
    // Each round rotates the 5-bit byte index (element, byte) of a pair left by one; three
    // turn element * 4 + byte into byte * 8 + element.
    for (int round = 0; round < 3; ++round) {
      __m128i t0 = _mm_unpacklo_epi8(a, b), t1 = _mm_unpackhi_epi8(a, b);
      __m128i t2 = _mm_unpacklo_epi8(c, d), t3 = _mm_unpackhi_epi8(c, d);
      a = t0, b = t1, c = t2, d = t3;
    }
    // a: byte 0 of elements 0-7 then byte 1 of 0-7; b: bytes 2, 3 of 0-7; c, d: of 8-15.
    st(p + j, _mm_unpacklo_epi64(a, c));
    st(p + m + j, _mm_unpackhi_epi64(a, c));
    st(p + 2 * m + j, _mm_unpacklo_epi64(b, d));
    st(p + 3 * m + j, _mm_unpackhi_epi64(b, d));
  }
  return j;
}
// The forward direction, 8-byte elements. The 128 bytes of 16 elements have a 7-bit index
// (element:4, byte:3). One round unpacks each vector v with vector v + 4 into vectors 2v
// (low halves) and 2v + 1 (high halves), which rotates that index left by one bit; four
// rounds give byte * 16 + element: vector b holds byte b of the 16 elements. Written out
// with named vectors so that the 16 of a round stay in registers.
inline void rotate_round(__m128i& x0, __m128i& x1, __m128i& x2, __m128i& x3, __m128i& x4,
                         __m128i& x5, __m128i& x6, __m128i& x7) {
  __m128i y0 = _mm_unpacklo_epi8(x0, x4), y1 = _mm_unpackhi_epi8(x0, x4);
  __m128i y2 = _mm_unpacklo_epi8(x1, x5), y3 = _mm_unpackhi_epi8(x1, x5);
  __m128i y4 = _mm_unpacklo_epi8(x2, x6), y5 = _mm_unpackhi_epi8(x2, x6);
  __m128i y6 = _mm_unpacklo_epi8(x3, x7), y7 = _mm_unpackhi_epi8(x3, x7);
  x0 = y0, x1 = y1, x2 = y2, x3 = y3, x4 = y4, x5 = y5, x6 = y6, x7 = y7;
}

uint64_t shuffle8_sse2(const uint8_t* in, uint8_t* out, uint64_t m, uint64_t i0, uint64_t n) {
  uint8_t* p = out + i0;
  uint64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const uint8_t* s = in + 8 * j;
    __m128i x0 = ld(s), x1 = ld(s + 16), x2 = ld(s + 32), x3 = ld(s + 48);
    __m128i x4 = ld(s + 64), x5 = ld(s + 80), x6 = ld(s + 96), x7 = ld(s + 112);
    for (int round = 0; round < 4; ++round) rotate_round(x0, x1, x2, x3, x4, x5, x6, x7);
    st(p + j, x0);
    st(p + m + j, x1);
    st(p + 2 * m + j, x2);
    st(p + 3 * m + j, x3);
    st(p + 4 * m + j, x4);
    st(p + 5 * m + j, x5);
    st(p + 6 * m + j, x6);
    st(p + 7 * m + j, x7);
  }
  return j;
}
#else
uint64_t shuffle8_sse2(const uint8_t*, uint8_t*, uint64_t, uint64_t, uint64_t) { return 0; }
uint64_t unshuffle2_sse2(const uint8_t*, uint8_t*, uint64_t, uint64_t, uint64_t) { return 0; }
uint64_t unshuffle4_sse2(const uint8_t*, uint8_t*, uint64_t, uint64_t, uint64_t) { return 0; }
uint64_t unshuffle8_sse2(const uint8_t*, uint8_t*, uint64_t, uint64_t, uint64_t) { return 0; }
uint64_t shuffle4_sse2(const uint8_t*, uint8_t*, uint64_t, uint64_t, uint64_t) { return 0; }
#endif

}  // namespace

void shuffle(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w) {
  shuffle_range(in, out, m, w, 0, m);
}

void unshuffle(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w) {
  unshuffle_range(in, out, m, w, 0, m);
}

void shuffle_range(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t i0,
                   uint64_t n) {
  uint64_t j = 0;
  switch (w) {
    case 2:
      return shuffle_fixed<2>(in, out, m, i0, n);
    case 4:
      j = shuffle4_sse2(in, out, m, i0, n);
      return shuffle_fixed<4>(in + 4 * j, out, m, i0 + j, n - j);
    case 8:
      j = shuffle8_sse2(in, out, m, i0, n);
      return shuffle_fixed<8>(in + 8 * j, out, m, i0 + j, n - j);
    default:
      for (uint64_t i = 0; i < n; ++i)
        for (uint32_t b = 0; b < w; ++b) out[b * m + i0 + i] = in[i * w + b];
  }
}

void unshuffle_range(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t i0,
                     uint64_t n) {
  uint64_t j = 0;
  switch (w) {
    case 2:
      j = unshuffle2_sse2(in, out, m, i0, n);
      return unshuffle_fixed<2>(in, out + 2 * j, m, i0 + j, n - j);
    case 4:
      j = unshuffle4_sse2(in, out, m, i0, n);
      return unshuffle_fixed<4>(in, out + 4 * j, m, i0 + j, n - j);
    case 8:
      j = unshuffle8_sse2(in, out, m, i0, n);
      return unshuffle_fixed<8>(in, out + 8 * j, m, i0 + j, n - j);
    default:
      for (uint64_t i = 0; i < n; ++i)
        for (uint32_t b = 0; b < w; ++b) out[i * w + b] = in[b * m + i0 + i];
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
