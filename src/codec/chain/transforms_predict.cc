// Predictors along the real dimensions, on the integer bit pattern of each element
// (arithmetic wraps modulo 2^bits, so any bit pattern round-trips, NaNs included).
// Residual r = x - pred (or x ^ pred for kXor), optionally zigzagged. Rows are row
// elements wide; the first row predicts from the previous value, the first column of a
// row from the value above.
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <type_traits>

#include "codec/chain/load_store.h"
#include "codec/chain/transforms.h"

namespace ckptfwd::codec::chain {
namespace {

template <class T>
inline T zig(T r) {
  using S = std::make_signed_t<T>;
  return static_cast<T>((r << 1) ^ static_cast<T>(static_cast<S>(r) >> (sizeof(T) * 8 - 1)));
}
template <class T>
inline T unzig(T z) {
  return static_cast<T>((z >> 1) ^ static_cast<T>(T(0) - (z & 1)));
}

// pred(i) for the kinds; x is the original stream (forward) or the decoded prefix (inverse).
template <class T>
inline T predicted(Step kind, const uint8_t* x, uint64_t i, uint64_t row) {
  auto at = [&](uint64_t k) { return load<T>(x + k * sizeof(T)); };
  if (kind == Step::kDelta || kind == Step::kXor || i < row) return i ? at(i - 1) : T(0);
  if (kind == Step::kPrevRow || i % row == 0) return at(i - row);
  return static_cast<T>(at(i - 1) + at(i - row) - at(i - row - 1));
}

template <class T, bool Zig, bool Xor>
void forward_1d(const uint8_t* in, uint8_t* out, uint64_t m) {
  T prev = 0;
  for (uint64_t i = 0; i < m; ++i) {
    T x = load<T>(in + i * sizeof(T));
    T r = Xor ? static_cast<T>(x ^ prev) : static_cast<T>(x - prev);
    store<T>(out + i * sizeof(T), Zig ? zig(r) : r);
    prev = x;
  }
}

template <class T>
inline T bswap(T v) {
  if constexpr (sizeof(T) == 2) return __builtin_bswap16(v);
  if constexpr (sizeof(T) == 4) return __builtin_bswap32(v);
  if constexpr (sizeof(T) == 8) return __builtin_bswap64(v);
  return v;
}

// Swap: the output is stored in the other byte order (a fused inverse of kSwap), saving
// the decoder a pass over the chunk.
template <class T, bool Zig, bool Xor, bool Swap>
void inverse_1d(const uint8_t* in, uint8_t* out, uint64_t m) {
  T prev = 0;
  for (uint64_t i = 0; i < m; ++i) {
    T r = load<T>(in + i * sizeof(T));
    if (Zig) r = unzig(r);
    prev = Xor ? static_cast<T>(r ^ prev) : static_cast<T>(r + prev);
    store<T>(out + i * sizeof(T), Swap ? bswap(prev) : prev);
  }
}

#if defined(__SSE2__)
// The body of a 2-D row (every element but the row's first, rows after the first) with
// SSE2 lanes for 32- and 64-bit elements: loads of the original stream only, so the lanes
// are independent. Returns the first element it left to the scalar loop.
template <class T, bool Zig, bool Lorenzo>
uint64_t forward_2d_body_sse2(const uint8_t* in, uint8_t* out, uint64_t i, uint64_t end,
                              uint64_t row) {
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8) {
    constexpr uint64_t kLanes = 16 / sizeof(T);
    auto ld = [](const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
    auto add = [](__m128i a, __m128i b) {
      return sizeof(T) == 8 ? _mm_add_epi64(a, b) : _mm_add_epi32(a, b);
    };
    auto sub = [](__m128i a, __m128i b) {
      return sizeof(T) == 8 ? _mm_sub_epi64(a, b) : _mm_sub_epi32(a, b);
    };
    const uint64_t up = row * sizeof(T);
    for (; i + kLanes <= end; i += kLanes) {
      const uint8_t* x = in + i * sizeof(T);
      __m128i p =
          Lorenzo ? sub(add(ld(x - sizeof(T)), ld(x - up)), ld(x - up - sizeof(T))) : ld(x - up);
      __m128i r = sub(ld(x), p);
      if (Zig) {  // (r << 1) ^ (all ones where r < 0)
        __m128i sign = sizeof(T) == 8 ? _mm_sub_epi64(_mm_setzero_si128(), _mm_srli_epi64(r, 63))
                                      : _mm_srai_epi32(r, 31);
        r = _mm_xor_si128(sizeof(T) == 8 ? _mm_slli_epi64(r, 1) : _mm_slli_epi32(r, 1), sign);
      }
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i * sizeof(T)), r);
    }
  }
  return i;
}
#endif

// 2-D kinds: the first row and each row's first element go through predicted(); the rest
// of a row is one loop without branches (SSE2 lanes for 4- and 8-byte elements).
template <class T, bool Zig, bool Lorenzo>
void forward_2d(const uint8_t* in, uint8_t* out, uint64_t m, uint64_t row) {
  const Step kind = Lorenzo ? Step::kLorenzo : Step::kPrevRow;
  auto emit = [&](uint64_t i, T p) {
    T r = static_cast<T>(load<T>(in + i * sizeof(T)) - p);
    store<T>(out + i * sizeof(T), Zig ? zig(r) : r);
  };
  for (uint64_t start = 0; start < m; start += row) {
    uint64_t end = start + row < m ? start + row : m;
    if (start == 0) {
      for (uint64_t i = 0; i < end; ++i) emit(i, predicted<T>(kind, in, i, row));
      continue;
    }
    emit(start, predicted<T>(kind, in, start, row));
    uint64_t i = start + 1;
#if defined(__SSE2__)
    i = forward_2d_body_sse2<T, Zig, Lorenzo>(in, out, i, end, row);
#endif
    for (; i < end; ++i) {
      const uint8_t* x = in + i * sizeof(T);
      emit(i, Lorenzo ? static_cast<T>(load<T>(x - sizeof(T)) + load<T>(x - row * sizeof(T)) -
                                       load<T>(x - (row + 1) * sizeof(T)))
                      : load<T>(x - row * sizeof(T)));
    }
  }
}

// Predicts from the decoded values in out; with Swap, out holds them byte-swapped, so they
// are swapped back when read (the swap of a row's values is cheap next to the memory pass).
template <class T, bool Zig, bool Lorenzo, bool Swap>
void inverse_2d(const uint8_t* in, uint8_t* out, uint64_t m, uint64_t row) {
  auto at = [&](uint64_t k) {
    T v = load<T>(out + k * sizeof(T));
    return Swap ? bswap(v) : v;
  };
  for (uint64_t start = 0; start < m; start += row) {
    uint64_t end = start + row < m ? start + row : m;
    for (uint64_t i = start; i < end; ++i) {
      T p;
      if (start == 0) {
        p = i ? at(i - 1) : T(0);
      } else if (i == start) {
        p = at(i - row);
      } else {
        p = Lorenzo ? static_cast<T>(at(i - 1) + at(i - row) - at(i - row - 1)) : at(i - row);
      }
      T r = load<T>(in + i * sizeof(T));
      if (Zig) r = unzig(r);
      T x = static_cast<T>(r + p);
      store<T>(out + i * sizeof(T), Swap ? bswap(x) : x);
    }
  }
}

// 3-D Lorenzo: the seven corners of the cube behind the element, each taken where it lies
// inside the chunk's grid (a plane of plane / row rows, starting at the chunk's first
// element) and left out where it does not; on the first plane that is kLorenzo, on a
// plane's first row kLorenzo across planes. Elements [i0, i0 + n): src holds the values
// the predictions read, at their stream index (element i at src + i * sizeof(T) - i0 *
// sizeof(T): src points at element i0), dst gets the residuals (forward) or, with the
// residuals in `in`, the values (inverse, src == dst: the earlier values are decoded).
template <class T, bool Zig, bool Forward>
void lorenzo3(const uint8_t* in, const uint8_t* src, uint8_t* dst, uint64_t i0, uint64_t n,
              uint64_t row, uint64_t plane) {
  constexpr uint64_t S = sizeof(T);
  const uint64_t rows = plane / row;  // rows of a plane (plane > 0: a multiple of row)
  uint64_t x = i0 % row, y = (i0 / row) % rows, z = i0 / plane;
  const uint64_t up = row * S, back = plane * S;
  for (uint64_t j = 0; j < n; ++j) {
    const uint8_t* p = src + j * S;
    auto at = [&](uint64_t off) { return load<T>(p - off); };
    T pred = 0;
    if (x) pred = static_cast<T>(pred + at(S));
    if (y) pred = static_cast<T>(pred + at(up));
    if (z) pred = static_cast<T>(pred + at(back));
    if (x && y) pred = static_cast<T>(pred - at(up + S));
    if (x && z) pred = static_cast<T>(pred - at(back + S));
    if (y && z) pred = static_cast<T>(pred - at(back + up));
    if (x && y && z) pred = static_cast<T>(pred + at(back + up + S));
    if constexpr (Forward) {
      T r = static_cast<T>(load<T>(p) - pred);
      store<T>(dst + j * S, Zig ? zig(r) : r);
    } else {
      T r = load<T>(in + j * S);
      if (Zig) r = unzig(r);
      store<T>(dst + j * S, static_cast<T>(r + pred));
    }
    if (++x == row) {
      x = 0;
      if (++y == rows) y = 0, ++z;
    }
  }
}

template <class T, bool Zig, bool Swap>
void run(bool forward, Step kind, const uint8_t* in, uint8_t* out, uint64_t m, uint64_t row,
         uint64_t plane) {
  row = predictor_row(row, m);
  if (kind == Step::kLorenzo3 && plane) {
    if (forward) return lorenzo3<T, Zig, true>(in, in, out, 0, m, row, plane);
    lorenzo3<T, Zig, false>(in, out, out, 0, m, row, plane);
    if (Swap)
      for (uint64_t i = 0; i < m; ++i)
        store<T>(out + i * sizeof(T), bswap(load<T>(out + i * sizeof(T))));
    return;
  }
  if (kind == Step::kLorenzo3) kind = Step::kLorenzo;  // one plane or none: 2-D
  switch (kind) {
    case Step::kXor:
      return forward ? forward_1d<T, false, true>(in, out, m)
                     : inverse_1d<T, false, true, Swap>(in, out, m);
    case Step::kPrevRow:
      return forward ? forward_2d<T, Zig, false>(in, out, m, row)
                     : inverse_2d<T, Zig, false, Swap>(in, out, m, row);
    case Step::kLorenzo:
      return forward ? forward_2d<T, Zig, true>(in, out, m, row)
                     : inverse_2d<T, Zig, true, Swap>(in, out, m, row);
    default:
      return forward ? forward_1d<T, Zig, false>(in, out, m)
                     : inverse_1d<T, Zig, false, Swap>(in, out, m);
  }
}

template <bool Zig, bool Swap>
void dispatch(bool forward, Step kind, const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w,
              uint64_t row, uint64_t plane) {
  switch (w) {
    case 1:
      return run<uint8_t, Zig, false>(forward, kind, in, out, m, row, plane);
    case 2:
      return run<uint16_t, Zig, Swap>(forward, kind, in, out, m, row, plane);
    case 4:
      return run<uint32_t, Zig, Swap>(forward, kind, in, out, m, row, plane);
    default:
      return run<uint64_t, Zig, Swap>(forward, kind, in, out, m, row, plane);
  }
}

// Inverse over elements [i0, i0 + n) for the block decoder: in holds their residuals, x
// points at element i0's slot, and the slots before it hold the decoded values of the
// elements before i0 (as far back as the kind looks: one, or row + 1). Same predictions
// as inverse_1d / inverse_2d; row is already normalized (1 <= row, m when one row).
#if defined(__SSE2__)
// SSE2 lanes (baseline x86-64) for 32- and 64-bit elements: residuals are unzigzagged a
// register at a time, and a running sum (the previous-value kinds, the Lorenzo rows) is a
// prefix sum of the lanes plus the last value of the register before.
//
// The residuals of 16 bytes of 4- or 8-byte elements (T), unzigzagged when Zig:
// (z >> 1) ^ -(z & 1) in each lane.
template <class T, bool Zig>
inline __m128i load_res(const uint8_t* p) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8);
  __m128i z = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  if (!Zig) return z;
  if constexpr (sizeof(T) == 8)
    return _mm_xor_si128(_mm_srli_epi64(z, 1),
                         _mm_sub_epi64(_mm_setzero_si128(), _mm_and_si128(z, _mm_set1_epi64x(1))));
  return _mm_xor_si128(_mm_srli_epi32(z, 1),
                       _mm_sub_epi32(_mm_setzero_si128(), _mm_and_si128(z, _mm_set1_epi32(1))));
}
inline __m128i prefix4(__m128i v, __m128i carry) {
  v = _mm_add_epi32(v, _mm_slli_si128(v, 4));
  v = _mm_add_epi32(v, _mm_slli_si128(v, 8));
  return _mm_add_epi32(v, carry);
}
inline void store4(uint8_t* p, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
inline __m128i load4(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
#endif

template <class T, bool Zig, bool Xor>
void inverse_1d_range(const uint8_t* in, uint8_t* x, uint64_t i0, uint64_t n) {
  T prev = i0 ? load<T>(x - sizeof(T)) : T(0);
  uint64_t j = 0;
#if defined(__SSE2__)
  if constexpr (sizeof(T) == 4 && !Xor) {
    __m128i carry = _mm_set1_epi32(static_cast<int>(prev));
    for (; j + 4 <= n; j += 4) {
      __m128i v = prefix4(load_res<uint32_t, Zig>(in + 4 * j), carry);
      store4(x + 4 * j, v);
      carry = _mm_shuffle_epi32(v, 0xFF);
    }
    prev = static_cast<T>(_mm_cvtsi128_si32(carry));
  }
#endif
  for (; j < n; ++j) {
    T r = load<T>(in + j * sizeof(T));
    if (Zig) r = unzig(r);
    prev = Xor ? static_cast<T>(r ^ prev) : static_cast<T>(r + prev);
    store<T>(x + j * sizeof(T), prev);
  }
}

template <class T, bool Zig, bool Lorenzo>
void inverse_2d_range(const uint8_t* in, uint8_t* x, uint64_t i0, uint64_t n, uint64_t row) {
  constexpr uint64_t S = sizeof(T);
  const uint64_t up = row * S;
  auto res = [&](uint64_t j) {
    T r = load<T>(in + j * S);
    return Zig ? unzig(r) : r;
  };
  uint64_t j = 0;
  if (i0 < row) {  // the first row: previous value
    const uint64_t end = row - i0 < n ? row - i0 : n;
    T prev = i0 ? load<T>(x - S) : T(0);
    for (; j < end; ++j) {
      prev = static_cast<T>(res(j) + prev);
      store<T>(x + j * S, prev);
    }
  }
  while (j < n) {
    const uint64_t col = (i0 + j) % row;
    const uint64_t end = n - j < row - col ? n : j + (row - col);
    uint8_t* p = x + j * S;
    if (col == 0) {  // the first column: the value above
      store<T>(p, static_cast<T>(res(j) + load<T>(p - up)));
      ++j, p += S;
    }
#if defined(__SSE2__)
    // Four lanes at a time when the row above them is complete (row >= 4).
    if constexpr (sizeof(T) == 4) {
      if (row >= 4 && Lorenzo && j < end) {
        __m128i carry = _mm_set1_epi32(static_cast<int>(load<T>(p - S)));
        for (; j + 4 <= end; j += 4, p += 16) {
          __m128i d = _mm_add_epi32(load_res<uint32_t, Zig>(in + 4 * j),
                                    _mm_sub_epi32(load4(p - up), load4(p - up - S)));
          __m128i v = prefix4(d, carry);
          store4(p, v);
          carry = _mm_shuffle_epi32(v, 0xFF);
        }
      } else if (row >= 4 && !Lorenzo) {
        for (; j + 4 <= end; j += 4, p += 16)
          store4(p, _mm_add_epi32(load_res<uint32_t, Zig>(in + 4 * j), load4(p - up)));
      }
    }
    // Two lanes at a time for 64-bit elements (row >= 2: the row above them is complete).
    // The scalar loop below carries the running sum through one add an element; here
    // the residual and the row above are combined for two elements at once, and their
    // sum with the carry costs two dependent operations per pair.
    if constexpr (sizeof(T) == 8) {
      if (row >= 2 && Lorenzo && j < end) {
        __m128i carry = _mm_set1_epi64x(static_cast<long long>(load<T>(p - S)));
        for (; j + 2 <= end; j += 2, p += 16) {
          __m128i d = _mm_add_epi64(load_res<uint64_t, Zig>(in + 8 * j),
                                    _mm_sub_epi64(load4(p - up), load4(p - up - S)));
          __m128i v = _mm_add_epi64(_mm_add_epi64(d, _mm_slli_si128(d, 8)), carry);
          store4(p, v);
          carry = _mm_shuffle_epi32(v, 0xEE);  // the high lane in both
        }
      }
    }
#endif
    if (Lorenzo) {
      T prev = load<T>(p - S);
      for (; j < end; ++j, p += S) {
        // The sum of the residual and the row above first: one add depends on prev.
        prev =
            static_cast<T>(static_cast<T>(res(j) + load<T>(p - up) - load<T>(p - up - S)) + prev);
        store<T>(p, prev);
      }
    } else {
      for (; j < end; ++j, p += S) store<T>(p, static_cast<T>(res(j) + load<T>(p - up)));
    }
  }
}

template <class T, bool Zig>
void range_kind(Step kind, const uint8_t* in, uint8_t* x, uint64_t i0, uint64_t n, uint64_t row,
                uint64_t plane) {
  if (kind == Step::kLorenzo3 && plane) return lorenzo3<T, Zig, false>(in, x, x, i0, n, row, plane);
  if (kind == Step::kLorenzo3) kind = Step::kLorenzo;
  switch (kind) {
    case Step::kXor:
      return inverse_1d_range<T, false, true>(in, x, i0, n);
    case Step::kPrevRow:
      return inverse_2d_range<T, Zig, false>(in, x, i0, n, row);
    case Step::kLorenzo:
      return inverse_2d_range<T, Zig, true>(in, x, i0, n, row);
    default:
      return inverse_1d_range<T, Zig, false>(in, x, i0, n);
  }
}

template <bool Zig>
void range_width(Step kind, const uint8_t* in, uint8_t* x, uint64_t i0, uint64_t n, uint32_t w,
                 uint64_t row, uint64_t plane) {
  switch (w) {
    case 1:
      return range_kind<uint8_t, Zig>(kind, in, x, i0, n, row, plane);
    case 2:
      return range_kind<uint16_t, Zig>(kind, in, x, i0, n, row, plane);
    case 4:
      return range_kind<uint32_t, Zig>(kind, in, x, i0, n, row, plane);
    default:
      return range_kind<uint64_t, Zig>(kind, in, x, i0, n, row, plane);
  }
}

}  // namespace

uint64_t predictor_row(uint64_t row, uint64_t m) {
  return row == 0 || row >= m ? (m ? m : 1) : row;
}

uint64_t predictor_plane(const std::vector<uint64_t>& inner, uint64_t row, uint64_t m) {
  if (inner.size() < 2 || row == 0) return 0;
  uint64_t plane = 0;
  if (__builtin_mul_overflow(inner[inner.size() - 2], inner.back(), &plane)) return 0;
  return plane > row && plane < m && plane % row == 0 ? plane : 0;
}

void unpredict_range(Step kind, bool zigzag, const uint8_t* in, uint8_t* x, uint64_t i0, uint64_t n,
                     uint32_t w, uint64_t row, uint64_t plane) {
  zigzag ? range_width<true>(kind, in, x, i0, n, w, row, plane)
         : range_width<false>(kind, in, x, i0, n, w, row, plane);
}

void predict(Step kind, bool zigzag, const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w,
             uint64_t row, uint64_t plane) {
  zigzag ? dispatch<true, false>(true, kind, in, out, m, w, row, plane)
         : dispatch<false, false>(true, kind, in, out, m, w, row, plane);
}

void unpredict(Step kind, bool zigzag, const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w,
               uint64_t row, bool swap_out, uint64_t plane) {
  if (swap_out)
    return zigzag ? dispatch<true, true>(false, kind, in, out, m, w, row, plane)
                  : dispatch<false, true>(false, kind, in, out, m, w, row, plane);
  zigzag ? dispatch<true, false>(false, kind, in, out, m, w, row, plane)
         : dispatch<false, false>(false, kind, in, out, m, w, row, plane);
}

}  // namespace ckptfwd::codec::chain
