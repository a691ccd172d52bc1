// Error-bounded lossy quantization of floats, used only when a variable opted into a
// LossyBound. Mode 0 (absolute): q = rint(v / step), step just under 2*abs. Mode 1
// (relative only): q = rint(log2|v| / step), step just under 2*log2(1 + rel), with the sign
// and zero folded into the integer code. Each value's decoded form is computed here exactly
// as quant_decode computes it and compared with the bound; values that miss it (NaN, inf,
// huge, too small for the relative bound) are exceptions stored verbatim.
#include <cmath>

#include "codec/chain/exceptions.h"
#include "codec/chain/transforms.h"

namespace ckptfwd::codec::chain {
namespace {

// A margin so that rounding in the decoder's arithmetic stays inside the bound.
constexpr double kStepMargin = 0.999;
constexpr double kCodeLimit = 4503599627370496.0;  // 2^52: exact in a double

inline uint64_t zig64(int64_t q) { return (uint64_t(q) << 1) ^ uint64_t(q >> 63); }
inline int64_t unzig64(uint64_t z) { return int64_t(z >> 1) ^ -int64_t(z & 1); }

template <class F>
F decode_value(uint8_t mode, double step, int64_t code) {
  if (mode == 0) return static_cast<F>(static_cast<double>(code) * step);
  if (code == 0) return F(0);
  uint64_t c = uint64_t(code) - 1;
  double mag = std::exp2(static_cast<double>(unzig64(c >> 1)) * step);
  return static_cast<F>((c & 1) ? -mag : mag);
}

template <class F>
bool encode_value(uint8_t mode, double step, F v, int64_t* code) {
  if (!std::isfinite(v)) return false;
  double d;
  if (mode == 0) {
    d = std::rint(static_cast<double>(v) / step);
  } else {
    if (v == 0) {
      if (std::signbit(v)) return false;  // -0.0 keeps its sign as an exception
      *code = 0;
      return true;
    }
    d = std::rint(std::log2(std::fabs(static_cast<double>(v))) / step);
  }
  if (!(std::fabs(d) < kCodeLimit)) return false;
  int64_t q = static_cast<int64_t>(d);
  *code = mode == 0 ? q : int64_t(((zig64(q) << 1) | (std::signbit(v) ? 1u : 0u)) + 1);
  return true;
}

template <class F>
void encode_typed(uint8_t mode, double abs, double rel, const uint8_t* in, uint8_t* out, uint64_t m,
                  StepRecord& rec, std::vector<uint8_t>& side) {
  const double step = mode == 0 ? 2 * abs * kStepMargin : 2 * std::log2(1 + rel) * kStepMargin;
  Exceptions ex;
  int64_t prev = 0, lo = 0, hi = 0;
  double max_err = 0;
  for (uint64_t i = 0; i < m; ++i) {
    F v = load<F>(in + i * sizeof(F));
    int64_t q;
    bool ok = encode_value(mode, step, v, &q);
    if (ok) {
      double back = static_cast<double>(decode_value<F>(mode, step, q));
      double err = std::fabs(back - static_cast<double>(v));
      double rel_err = v != 0 ? err / std::fabs(static_cast<double>(v)) : (err == 0 ? 0 : 1);
      ok = std::isfinite(back) && (abs <= 0 || err <= abs) && (rel <= 0 || rel_err <= rel);
      if (ok) max_err = std::fmax(max_err, mode == 0 ? err : rel_err);
    }
    if (!ok) {
      ex.add(i, in + i * sizeof(F), sizeof(F));
      q = prev;
    }
    prev = q;
    lo = q < lo ? q : lo;
    hi = q > hi ? q : hi;
    store<int64_t>(out + 8 * i, q);
  }
  rec.spec = {Step::kQuant, mode};
  rec.scale = step;
  rec.max_err = max_err;
  rec.width = narrow_if_fits(out, m, lo, hi);
  rec.count = ex.positions.size();
  ex.append_to(side);
}

template <class F>
void decode_typed(const StepRecord& rec, const uint8_t* in, uint8_t* out, uint64_t m) {
  for (uint64_t i = 0; i < m; ++i)
    store<F>(out + i * sizeof(F),
             decode_value<F>(rec.spec.param, rec.scale, load_int(in, i, rec.width)));
}

}  // namespace

void quant_encode(uint8_t mode, double abs, double rel, const uint8_t* in, uint8_t* out, uint64_t m,
                  uint32_t w, StepRecord& rec, std::vector<uint8_t>& side) {
  w == 4 ? encode_typed<float>(mode, abs, rel, in, out, m, rec, side)
         : encode_typed<double>(mode, abs, rel, in, out, m, rec, side);
}

double quant_bound(const StepRecord& rec) {
  const double half = rec.scale / (2 * kStepMargin);
  return rec.spec.param == 0 ? half : std::exp2(half) - 1;
}

bool quant_decode(const StepRecord& rec, const uint8_t* in, const uint8_t* side, uint8_t* out,
                  uint64_t m, uint32_t w) {
  w == 4 ? decode_typed<float>(rec, in, out, m) : decode_typed<double>(rec, in, out, m);
  return patch_exceptions(side, rec.count, out, m, w);
}

}  // namespace ckptfwd::codec::chain
