// Exact fixed-point for floats holding decimal numbers (the idea of ALP, Afroozeh et al.,
// SIGMOD 2024): q = rint(v * 10^e) is kept when (float)(q / 10^e) gives v back bit for
// bit; any other value (-0.0, NaN, inf, denormals, more digits) is an exception. Division
// by an exact power of ten is correctly rounded, so decoding repeats the encoder's check.
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <cmath>
#include <cstring>

#include "codec/chain/exceptions.h"
#include "codec/chain/transforms.h"

namespace ckptfwd::codec::chain {
namespace {

constexpr int kMaxExponent = 22;  // 10^22 is the largest power of ten exact in a double

double pow10(uint8_t e) {
  static const double table[kMaxExponent + 1] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  return table[e];
}

// q when v is exactly representable with exponent e (limit bounds |q|).
template <class F>
inline bool to_fixed(F v, double p10, double limit, int64_t* q) {
  double d = std::rint(static_cast<double>(v) * p10);
  if (!(std::fabs(d) < limit)) return false;  // NaN, inf, too large
  *q = static_cast<int64_t>(d);
  F back = static_cast<F>(static_cast<double>(*q) / p10);
  return memcmp(&back, &v, sizeof v) == 0;
}

template <class F>
void encode_typed(uint8_t e, const uint8_t* in, uint8_t* out, uint64_t m, StepRecord& rec,
                  std::vector<uint8_t>& side) {
  const double p10 = pow10(e), limit = sizeof(F) == 4 ? 2147483647.0 : 9007199254740992.0;
  Exceptions ex;
  int64_t prev = 0, lo = 0, hi = 0;
  for (uint64_t i = 0; i < m; ++i) {
    F v = load<F>(in + i * sizeof(F));
    int64_t q;
    if (!to_fixed(v, p10, limit, &q)) {
      ex.add(i, in + i * sizeof(F), sizeof(F));
      q = prev;  // a residual of 0 for the predictor that follows
    }
    prev = q;
    lo = q < lo ? q : lo;
    hi = q > hi ? q : hi;
    store<int64_t>(out + 8 * i, q);
  }
  rec.width = narrow_if_fits(out, m, lo, hi);
  rec.count = ex.positions.size();
  ex.append_to(side);
}

template <class F>
void decode_typed(const StepRecord& rec, const uint8_t* in, uint8_t* out, uint64_t m) {
  const double p10 = pow10(rec.spec.param);
  for (uint64_t i = 0; i < m; ++i)
    store<F>(out + i * sizeof(F),
             static_cast<F>(static_cast<double>(load_int(in, i, rec.width)) / p10));
}

template <class T>
inline T bswap(T v) {
  if constexpr (sizeof(T) == 4) return __builtin_bswap32(v);
  return __builtin_bswap64(v);
}

// decode_typed on a block, with the values stored in either byte order. The int32 to
// float case (the common one) takes two values per SSE2 division: the same correctly
// rounded double quotient, then the same conversion to float as the scalar code.
template <class F, class I, class U, bool Swap>
void decode_range(const uint8_t* in, uint8_t* out, uint64_t n, double p10) {
  uint64_t i = 0;
#if defined(__SSE2__)
  if constexpr (sizeof(F) == 4 && sizeof(I) == 4) {
    const __m128d d = _mm_set1_pd(p10);
    for (; i + 4 <= n; i += 4) {
      __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 4 * i));
      __m128 lo = _mm_cvtpd_ps(_mm_div_pd(_mm_cvtepi32_pd(q), d));
      __m128 hi = _mm_cvtpd_ps(_mm_div_pd(_mm_cvtepi32_pd(_mm_srli_si128(q, 8)), d));
      __m128i v = _mm_castps_si128(_mm_movelh_ps(lo, hi));
      if (Swap) {  // reverse the bytes of each 32-bit lane
        v = _mm_or_si128(_mm_slli_epi16(v, 8), _mm_srli_epi16(v, 8));
        v = _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, 0xB1), 0xB1);
      }
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4 * i), v);
    }
  }
#endif
  for (; i < n; ++i) {
    F f = static_cast<F>(static_cast<double>(load<I>(in + i * sizeof(I))) / p10);
    U u;
    memcpy(&u, &f, sizeof u);
    store<U>(out + i * sizeof(F), Swap ? bswap(u) : u);
  }
}

template <class F, class U, bool Swap>
void decode_range_width(uint8_t width, const uint8_t* in, uint8_t* out, uint64_t n, double p10) {
  width == 4 ? decode_range<F, int32_t, U, Swap>(in, out, n, p10)
             : decode_range<F, int64_t, U, Swap>(in, out, n, p10);
}

}  // namespace

void fixed_decode_range(const StepRecord& rec, const uint8_t* in, uint8_t* out, uint64_t n,
                        uint32_t w, bool swap_out) {
  const double p10 = pow10(rec.spec.param);
  if (w == 4)
    swap_out ? decode_range_width<float, uint32_t, true>(rec.width, in, out, n, p10)
             : decode_range_width<float, uint32_t, false>(rec.width, in, out, n, p10);
  else
    swap_out ? decode_range_width<double, uint64_t, true>(rec.width, in, out, n, p10)
             : decode_range_width<double, uint64_t, false>(rec.width, in, out, n, p10);
}

void fixed_encode(uint8_t e, const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w,
                  StepRecord& rec, std::vector<uint8_t>& side) {
  if (e > kMaxExponent) e = kMaxExponent;
  rec.spec = {Step::kFixed, e};
  w == 4 ? encode_typed<float>(e, in, out, m, rec, side)
         : encode_typed<double>(e, in, out, m, rec, side);
}

bool fixed_decode(const StepRecord& rec, const uint8_t* in, const uint8_t* side, uint8_t* out,
                  uint64_t m, uint32_t w) {
  w == 4 ? decode_typed<float>(rec, in, out, m) : decode_typed<double>(rec, in, out, m);
  return patch_exceptions(side, rec.count, out, m, w);
}

double fixed_miss_rate(uint8_t e, const uint8_t* in, uint64_t m, uint32_t w, double stop_above) {
  if (m == 0) return 1;
  const double p10 = pow10(e > kMaxExponent ? kMaxExponent : e);
  // Past this many misses the rate is above stop_above whatever the rest holds.
  const double budget = stop_above * double(m);
  uint64_t miss = 0;
  int64_t q;
  for (uint64_t i = 0; i < m && double(miss) <= budget; ++i)
    miss += w == 4 ? !to_fixed(load<float>(in + 4 * i), p10, 2147483647.0, &q)
                   : !to_fixed(load<double>(in + 8 * i), p10, 9007199254740992.0, &q);
  return double(miss) / double(m);
}

bool side_size(const StepRecord& rec, uint64_t m, uint32_t w, uint64_t* bytes) {
  switch (rec.spec.kind) {
    case Step::kFixed:
    case Step::kQuant:
      if ((w != 4 && w != 8) || (rec.width != 4 && rec.width != 8) || rec.count > m) return false;
      if (rec.spec.kind == Step::kFixed && rec.spec.param > kMaxExponent) return false;
      if (rec.spec.kind == Step::kQuant && rec.spec.param > 1) return false;
      *bytes = rec.count * (8 + w);
      return true;
    case Step::kDict:
      if (rec.width != 1 && rec.width != 2) return false;
      if (rec.count > kMaxDictEntries || rec.count > m || (m > 0 && rec.count == 0)) return false;
      if (w != 1 && w != 2 && w != 4 && w != 8) return false;
      *bytes = rec.count * w;
      return true;
    default:
      *bytes = 0;
      return true;
  }
}

}  // namespace ckptfwd::codec::chain
