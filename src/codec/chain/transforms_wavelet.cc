// The integer wavelet of the chain (Step::kWavelet): CDF 5/3 lifting, as JPEG 2000's
// reversible path uses it, along the rows (the innermost dimension) and then the columns
// of the chunk's rows, repeated on the low-pass corner for each level, coefficients
// zigzagged.
//
// Exact for any input: every lifting step adds to a value a function of values the inverse
// has already rebuilt, in w-bit wrapping arithmetic on both sides (the averages are taken
// without overflow, so no input can make the two sides compute different predictions). A
// quantizer's codes therefore come back bit for bit and each value keeps the bound it was
// checked against before this step.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "codec/chain/load_store.h"
#include "codec/chain/transforms.h"

namespace ckptfwd::codec::chain {
namespace {

// floor((a + b) / 2) without overflow, for signed a and b.
template <class S>
inline S floor_half_sum(S a, S b) {
  return static_cast<S>((a >> 1) + (b >> 1) + (a & b & 1));
}
// floor((a + b + 2) / 4) without overflow.
template <class S>
inline S floor_quarter_sum_2(S a, S b) {
  const S h = floor_half_sum(a, b);
  return static_cast<S>((h >> 1) + (h & 1));
}
template <class S>
inline S wrap_add(S a, S b) {
  using U = std::make_unsigned_t<S>;
  return static_cast<S>(static_cast<U>(a) + static_cast<U>(b));
}
template <class S>
inline S wrap_sub(S a, S b) {
  using U = std::make_unsigned_t<S>;
  return static_cast<S>(static_cast<U>(a) - static_cast<U>(b));
}

// One level along a line of n values in x (interleaved: evens the low pass, odds the
// details), in place; symmetric extension at both ends (the value past an end is the one
// before it), the ends handled outside the loops.
template <class S>
void lift_forward(S* x, uint64_t n) {
  if (n < 2) return;
  uint64_t i = 1;
  for (; i + 1 < n; i += 2) x[i] = wrap_sub(x[i], floor_half_sum(x[i - 1], x[i + 1]));
  if (i < n) x[i] = wrap_sub(x[i], x[i - 1]);  // floor_half_sum(a, a) == a
  x[0] = wrap_add(x[0], floor_quarter_sum_2(x[1], x[1]));
  for (i = 2; i + 1 < n; i += 2) x[i] = wrap_add(x[i], floor_quarter_sum_2(x[i - 1], x[i + 1]));
  if (i < n) x[i] = wrap_add(x[i], floor_quarter_sum_2(x[i - 1], x[i - 1]));
}
template <class S>
void lift_inverse(S* x, uint64_t n) {
  if (n < 2) return;
  x[0] = wrap_sub(x[0], floor_quarter_sum_2(x[1], x[1]));
  uint64_t i = 2;
  for (; i + 1 < n; i += 2) x[i] = wrap_sub(x[i], floor_quarter_sum_2(x[i - 1], x[i + 1]));
  if (i < n) x[i] = wrap_sub(x[i], floor_quarter_sum_2(x[i - 1], x[i - 1]));
  for (i = 1; i + 1 < n; i += 2) x[i] = wrap_add(x[i], floor_half_sum(x[i - 1], x[i + 1]));
  if (i < n) x[i] = wrap_add(x[i], x[i - 1]);
}

// A row of n values at v: lifted in place, then stored back with the low pass first
// (forward), or the other way round (inverse); line is scratch.
template <class S>
void row_forward(S* v, uint64_t n, std::vector<S>& line) {
  lift_forward(v, n);
  line.resize(n);
  const uint64_t lows = (n + 1) / 2;
  for (uint64_t i = 0; i < lows; ++i) line[i] = v[2 * i];
  for (uint64_t i = 0; i < n / 2; ++i) line[lows + i] = v[2 * i + 1];
  memcpy(v, line.data(), n * sizeof(S));
}
template <class S>
void row_inverse(S* v, uint64_t n, std::vector<S>& line) {
  line.resize(n);
  const uint64_t lows = (n + 1) / 2;
  for (uint64_t i = 0; i < lows; ++i) line[2 * i] = v[i];
  for (uint64_t i = 0; i < n / 2; ++i) line[2 * i + 1] = v[lows + i];
  lift_inverse(line.data(), n);
  memcpy(v, line.data(), n * sizeof(S));
}

// The columns [c0, c0 + g) of the first n rows of v (rows of stride values) at once: a
// strip of g columns is gathered row by row into strip (n x g), lifted along its rows
// with the g columns side by side (whole cache lines read once, an inner loop the compiler
// vectorizes; one column at a time read a cache line per value), and stored back with the
// low pass first (forward) or the other way round (inverse).
template <class S>
void strip_forward(S* v, uint64_t n, uint64_t stride, uint64_t c0, uint64_t g,
                   std::vector<S>& strip) {
  strip.resize(n * g);
  for (uint64_t i = 0; i < n; ++i) memcpy(&strip[i * g], v + i * stride + c0, g * sizeof(S));
  S* x = strip.data();
  for (uint64_t i = 1; i < n; i += 2) {
    const S* a = x + (i - 1) * g;
    const S* b = x + (i + 1 < n ? i + 1 : i - 1) * g;
    S* d = x + i * g;
    for (uint64_t j = 0; j < g; ++j) d[j] = wrap_sub(d[j], floor_half_sum(a[j], b[j]));
  }
  for (uint64_t i = 0; i < n; i += 2) {
    const S* a = x + (i > 0 ? i - 1 : i + 1) * g;
    const S* b = x + (i + 1 < n ? i + 1 : i - 1) * g;
    S* s = x + i * g;
    for (uint64_t j = 0; j < g; ++j) s[j] = wrap_add(s[j], floor_quarter_sum_2(a[j], b[j]));
  }
  const uint64_t lows = (n + 1) / 2;
  for (uint64_t i = 0; i < n; ++i)
    memcpy(v + (i % 2 ? lows + i / 2 : i / 2) * stride + c0, &strip[i * g], g * sizeof(S));
}
template <class S>
void strip_inverse(S* v, uint64_t n, uint64_t stride, uint64_t c0, uint64_t g,
                   std::vector<S>& strip) {
  strip.resize(n * g);
  const uint64_t lows = (n + 1) / 2;
  for (uint64_t i = 0; i < n; ++i)
    memcpy(&strip[i * g], v + (i % 2 ? lows + i / 2 : i / 2) * stride + c0, g * sizeof(S));
  S* x = strip.data();
  for (uint64_t i = 0; i < n; i += 2) {
    const S* a = x + (i > 0 ? i - 1 : i + 1) * g;
    const S* b = x + (i + 1 < n ? i + 1 : i - 1) * g;
    S* s = x + i * g;
    for (uint64_t j = 0; j < g; ++j) s[j] = wrap_sub(s[j], floor_quarter_sum_2(a[j], b[j]));
  }
  for (uint64_t i = 1; i < n; i += 2) {
    const S* a = x + (i - 1) * g;
    const S* b = x + (i + 1 < n ? i + 1 : i - 1) * g;
    S* d = x + i * g;
    for (uint64_t j = 0; j < g; ++j) d[j] = wrap_add(d[j], floor_half_sum(a[j], b[j]));
  }
  for (uint64_t i = 0; i < n; ++i) memcpy(v + i * stride + c0, &strip[i * g], g * sizeof(S));
}
// Columns per strip: a cache line of 8-byte values and more of narrower ones.
constexpr uint64_t kStripColumns = 64;

// The corner each level works on: (rows, cols) of level 0, then halved (rounding up)
// while either side still has two values.
struct Level {
  uint64_t rows, cols;
};
std::vector<Level> levels_of(uint64_t rows, uint64_t cols, uint8_t levels) {
  std::vector<Level> out;
  for (uint8_t l = 0; l < levels && (rows >= 2 || cols >= 2); ++l) {
    out.push_back({rows, cols});
    rows = (rows + 1) / 2;
    cols = (cols + 1) / 2;
  }
  return out;
}

template <class S>
S zig(S v) {
  using U = std::make_unsigned_t<S>;
  return static_cast<S>((static_cast<U>(v) << 1) ^ static_cast<U>(v >> (sizeof(S) * 8 - 1)));
}
template <class S>
S unzig(S z) {
  using U = std::make_unsigned_t<S>;
  const U u = static_cast<U>(z);
  return static_cast<S>((u >> 1) ^ (U(0) - (u & 1)));
}

// The chunk's values as S, in memory the thread keeps (a chunk is megabytes: fresh memory
// for each would cost its page faults every time).
template <class S>
std::vector<S>& values(uint64_t m) {
  thread_local std::vector<S> v;
  if (v.size() < m) v.resize(m);
  return v;
}

template <class S>
void forward(const uint8_t* in, uint8_t* out, uint64_t m, uint64_t row, uint8_t levels) {
  std::vector<S>& v = values<S>(m);
  for (uint64_t i = 0; i < m; ++i) v[i] = load<S>(in + i * sizeof(S));
  const uint64_t cols = predictor_row(row, m), rows = m / cols;
  std::vector<S> line;
  for (const Level& l : levels_of(rows, cols, levels)) {
    if (l.cols >= 2)
      for (uint64_t r = 0; r < l.rows; ++r) row_forward(v.data() + r * cols, l.cols, line);
    if (l.rows >= 2)
      for (uint64_t c = 0; c < l.cols; c += kStripColumns)
        strip_forward(v.data(), l.rows, cols, c, std::min(kStripColumns, l.cols - c), line);
  }
  for (uint64_t i = 0; i < m; ++i) store<S>(out + i * sizeof(S), zig(v[i]));
}

template <class S>
void inverse(const uint8_t* in, uint8_t* out, uint64_t m, uint64_t row, uint8_t levels) {
  std::vector<S>& v = values<S>(m);
  for (uint64_t i = 0; i < m; ++i) v[i] = unzig(load<S>(in + i * sizeof(S)));
  const uint64_t cols = predictor_row(row, m), rows = m / cols;
  std::vector<S> line;
  const std::vector<Level> ls = levels_of(rows, cols, levels);
  for (auto l = ls.rbegin(); l != ls.rend(); ++l) {
    if (l->rows >= 2)
      for (uint64_t c = 0; c < l->cols; c += kStripColumns)
        strip_inverse(v.data(), l->rows, cols, c, std::min(kStripColumns, l->cols - c), line);
    if (l->cols >= 2)
      for (uint64_t r = 0; r < l->rows; ++r) row_inverse(v.data() + r * cols, l->cols, line);
  }
  for (uint64_t i = 0; i < m; ++i) store<S>(out + i * sizeof(S), v[i]);
}

// The transform for the element width w (1, 2, 4, or 8 for anything else: callers check).
void by_width(bool fwd, const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t row,
              uint8_t levels) {
  switch (w) {
    case 1:
      return fwd ? forward<int8_t>(in, out, m, row, levels)
                 : inverse<int8_t>(in, out, m, row, levels);
    case 2:
      return fwd ? forward<int16_t>(in, out, m, row, levels)
                 : inverse<int16_t>(in, out, m, row, levels);
    case 4:
      return fwd ? forward<int32_t>(in, out, m, row, levels)
                 : inverse<int32_t>(in, out, m, row, levels);
    default:
      return fwd ? forward<int64_t>(in, out, m, row, levels)
                 : inverse<int64_t>(in, out, m, row, levels);
  }
}

}  // namespace

void wavelet_forward(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t row,
                     uint8_t levels) {
  by_width(true, in, out, m, w, row, levels);
}

void wavelet_inverse(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t row,
                     uint8_t levels) {
  by_width(false, in, out, m, w, row, levels);
}

}  // namespace ckptfwd::codec::chain
