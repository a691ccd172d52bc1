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

// One level along n positions of x, each g values side by side (g = 1: a row; g > 1: a
// strip of g columns, so the inner loop runs along whole cache lines and vectorizes), in
// place: interleaved, the even positions become the low pass and the odd ones the details.
// Forward: the odd positions lose the floor of half their neighbours' sum (predict), then
// the even ones gain the floor of a quarter of theirs (update); kInverse undoes the two
// steps in the opposite order with the opposite sign. Symmetric extension at both ends
// (the position past an end is the one before it), the ends handled outside the loops.
// kOne: g is 1, known when compiling (a row's lanes loop otherwise cost a fifth of the
// transform's speed).
template <class S, bool kInverse, bool kOne = false>
void lift(S* x, uint64_t n, uint64_t lanes) {
  if (n < 2) return;
  const uint64_t g = kOne ? 1 : lanes;
  auto at = [&](uint64_t i) { return x + i * g; };
  auto predict = [&](uint64_t i, uint64_t right) {
    S *d = at(i), *a = at(i - 1), *b = at(right);
    for (uint64_t j = 0; j < g; ++j) {
      const S p = floor_half_sum(a[j], b[j]);
      d[j] = kInverse ? wrap_add(d[j], p) : wrap_sub(d[j], p);
    }
  };
  auto update = [&](uint64_t i, uint64_t left, uint64_t right) {
    S *s = at(i), *a = at(left), *b = at(right);
    for (uint64_t j = 0; j < g; ++j) {
      const S u = floor_quarter_sum_2(a[j], b[j]);
      s[j] = kInverse ? wrap_sub(s[j], u) : wrap_add(s[j], u);
    }
  };
  auto predict_all = [&] {
    uint64_t i = 1;
    for (; i + 1 < n; i += 2) predict(i, i + 1);
    if (i < n) predict(i, i - 1);
  };
  auto update_all = [&] {
    update(0, 1, 1);
    uint64_t i = 2;
    for (; i + 1 < n; i += 2) update(i, i - 1, i + 1);
    if (i < n) update(i, i - 1, i - 1);
  };
  if constexpr (kInverse) {
    update_all();
    predict_all();
  } else {
    predict_all();
    update_all();
  }
}

// Where position i of a lifted line of n goes with the low pass first.
inline uint64_t low_first(uint64_t i, uint64_t n) { return i % 2 ? (n + 1) / 2 + i / 2 : i / 2; }

// A row of n values at v: lifted in place, then stored back with the low pass first
// (forward), or the other way round (inverse); line is scratch.
template <class S>
void row_forward(S* v, uint64_t n, std::vector<S>& line) {
  lift<S, false, true>(v, n, 1);
  line.resize(n);
  for (uint64_t i = 0; i < n; ++i) line[low_first(i, n)] = v[i];
  memcpy(v, line.data(), n * sizeof(S));
}
template <class S>
void row_inverse(S* v, uint64_t n, std::vector<S>& line) {
  line.resize(n);
  for (uint64_t i = 0; i < n; ++i) line[i] = v[low_first(i, n)];
  lift<S, true, true>(line.data(), n, 1);
  memcpy(v, line.data(), n * sizeof(S));
}

// The columns [c0, c0 + g) of the first n rows of v (rows of stride values) at once:
// gathered row by row into strip (n x g), lifted with the g columns side by side (one
// column at a time read a cache line per value), and stored back with the low pass first
// (forward) or the other way round (inverse).
template <class S>
void strip_forward(S* v, uint64_t n, uint64_t stride, uint64_t c0, uint64_t g,
                   std::vector<S>& strip) {
  strip.resize(n * g);
  for (uint64_t i = 0; i < n; ++i) memcpy(&strip[i * g], v + i * stride + c0, g * sizeof(S));
  lift<S, false>(strip.data(), n, g);
  for (uint64_t i = 0; i < n; ++i)
    memcpy(v + low_first(i, n) * stride + c0, &strip[i * g], g * sizeof(S));
}
template <class S>
void strip_inverse(S* v, uint64_t n, uint64_t stride, uint64_t c0, uint64_t g,
                   std::vector<S>& strip) {
  strip.resize(n * g);
  for (uint64_t i = 0; i < n; ++i)
    memcpy(&strip[i * g], v + low_first(i, n) * stride + c0, g * sizeof(S));
  lift<S, true>(strip.data(), n, g);
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

// The chunk's values as S, and the scratch of a row or strip, in memory the thread keeps
// (a chunk is megabytes: fresh memory for each would cost its page faults every time).
template <class S>
std::vector<S>& values(uint64_t m) {
  thread_local std::vector<S> v;
  if (v.size() < m) v.resize(m);
  return v;
}
template <class S>
std::vector<S>& scratch() {
  thread_local std::vector<S> line;
  return line;
}

template <class S>
void forward(const uint8_t* in, uint8_t* out, uint64_t m, uint64_t row, uint8_t levels) {
  std::vector<S>& v = values<S>(m);
  for (uint64_t i = 0; i < m; ++i) v[i] = load<S>(in + i * sizeof(S));
  const uint64_t cols = predictor_row(row, m), rows = m / cols;
  std::vector<S>& line = scratch<S>();
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
  std::vector<S>& line = scratch<S>();
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
