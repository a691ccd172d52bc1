// Predictors along the real dimensions, on the integer bit pattern of each element
// (arithmetic wraps modulo 2^bits, so any bit pattern round-trips, NaNs included).
// Residual r = x - pred (or x ^ pred for kXor), optionally zigzagged. Rows are row
// elements wide; the first row predicts from the previous value, the first column of a
// row from the value above.
#include <type_traits>

#include "codec/load_store.h"
#include "codec/transforms.h"

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

template <class T, bool Zig, bool Xor>
void inverse_1d(const uint8_t* in, uint8_t* out, uint64_t m) {
  T prev = 0;
  for (uint64_t i = 0; i < m; ++i) {
    T r = load<T>(in + i * sizeof(T));
    if (Zig) r = unzig(r);
    prev = Xor ? static_cast<T>(r ^ prev) : static_cast<T>(r + prev);
    store<T>(out + i * sizeof(T), prev);
  }
}

// 2-D kinds: the first row (and column) go through predicted(); the body loop is branch-free.
template <class T, bool Zig, bool Lorenzo>
void forward_2d(const uint8_t* in, uint8_t* out, uint64_t m, uint64_t row) {
  const Step kind = Lorenzo ? Step::kLorenzo : Step::kPrevRow;
  for (uint64_t start = 0; start < m; start += row) {
    uint64_t end = start + row < m ? start + row : m;
    for (uint64_t i = start; i < end; ++i) {
      T p;
      if (start == 0 || i == start) {
        p = predicted<T>(kind, in, i, row);
      } else {
        const uint8_t* x = in + i * sizeof(T);
        p = Lorenzo ? static_cast<T>(load<T>(x - sizeof(T)) + load<T>(x - row * sizeof(T)) -
                                     load<T>(x - (row + 1) * sizeof(T)))
                    : load<T>(x - row * sizeof(T));
      }
      T r = static_cast<T>(load<T>(in + i * sizeof(T)) - p);
      store<T>(out + i * sizeof(T), Zig ? zig(r) : r);
    }
  }
}

template <class T, bool Zig, bool Lorenzo>
void inverse_2d(const uint8_t* in, uint8_t* out, uint64_t m, uint64_t row) {
  const Step kind = Lorenzo ? Step::kLorenzo : Step::kPrevRow;
  for (uint64_t start = 0; start < m; start += row) {
    uint64_t end = start + row < m ? start + row : m;
    for (uint64_t i = start; i < end; ++i) {
      T p;
      if (start == 0 || i == start) {
        p = predicted<T>(kind, out, i, row);
      } else {
        const uint8_t* x = out + i * sizeof(T);
        p = Lorenzo ? static_cast<T>(load<T>(x - sizeof(T)) + load<T>(x - row * sizeof(T)) -
                                     load<T>(x - (row + 1) * sizeof(T)))
                    : load<T>(x - row * sizeof(T));
      }
      T r = load<T>(in + i * sizeof(T));
      if (Zig) r = unzig(r);
      store<T>(out + i * sizeof(T), static_cast<T>(r + p));
    }
  }
}

template <class T, bool Zig>
void run(bool forward, Step kind, const uint8_t* in, uint8_t* out, uint64_t m, uint64_t row) {
  if (row == 0 || row >= m) row = m ? m : 1;  // one row: 2-D kinds become previous value
  switch (kind) {
    case Step::kXor:
      return forward ? forward_1d<T, false, true>(in, out, m)
                     : inverse_1d<T, false, true>(in, out, m);
    case Step::kPrevRow:
      return forward ? forward_2d<T, Zig, false>(in, out, m, row)
                     : inverse_2d<T, Zig, false>(in, out, m, row);
    case Step::kLorenzo:
      return forward ? forward_2d<T, Zig, true>(in, out, m, row)
                     : inverse_2d<T, Zig, true>(in, out, m, row);
    default:
      return forward ? forward_1d<T, Zig, false>(in, out, m)
                     : inverse_1d<T, Zig, false>(in, out, m);
  }
}

template <bool Zig>
void dispatch(bool forward, Step kind, const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w,
              uint64_t row) {
  switch (w) {
    case 1:
      return run<uint8_t, Zig>(forward, kind, in, out, m, row);
    case 2:
      return run<uint16_t, Zig>(forward, kind, in, out, m, row);
    case 4:
      return run<uint32_t, Zig>(forward, kind, in, out, m, row);
    default:
      return run<uint64_t, Zig>(forward, kind, in, out, m, row);
  }
}

}  // namespace

void predict(Step kind, bool zigzag, const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w,
             uint64_t row) {
  zigzag ? dispatch<true>(true, kind, in, out, m, w, row)
         : dispatch<false>(true, kind, in, out, m, w, row);
}

void unpredict(Step kind, bool zigzag, const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w,
               uint64_t row) {
  zigzag ? dispatch<true>(false, kind, in, out, m, w, row)
         : dispatch<false>(false, kind, in, out, m, w, row);
}

}  // namespace ckptfwd::codec::chain
