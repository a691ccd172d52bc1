// Columns: a chunk of records (rows of `row` elements, the innermost dimension) stored
// field by field, so that a predictor after it runs along one field of consecutive
// records and the entropy stage sees each field's values together.
#include <cstring>

#include "codec/chain/transforms.h"

namespace ckptfwd::codec::chain {
namespace {

// Element c of record i between in and out (forward: record order to column order). W:
// the element width when it is known at compile time (fixed-size copies), 0 for w.
template <uint32_t W>
void gather(const uint8_t* in, uint8_t* out, uint64_t rows, uint64_t row, uint32_t w,
            bool forward) {
  const uint64_t size = W ? W : w;
  for (uint64_t c = 0; c < row; ++c)
    for (uint64_t i = 0; i < rows; ++i) {
      const uint64_t rec = (i * row + c) * size, col = (c * rows + i) * size;
      if (forward)
        memcpy(out + col, in + rec, size);
      else
        memcpy(out + rec, in + col, size);
    }
}

void gather_any(const uint8_t* in, uint8_t* out, uint64_t rows, uint64_t row, uint32_t w,
                bool forward) {
  switch (w) {
    case 1:
      return gather<1>(in, out, rows, row, w, forward);
    case 2:
      return gather<2>(in, out, rows, row, w, forward);
    case 4:
      return gather<4>(in, out, rows, row, w, forward);
    case 8:
      return gather<8>(in, out, rows, row, w, forward);
    default:
      return gather<0>(in, out, rows, row, w, forward);
  }
}

void columns(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t row, bool forward) {
  const uint64_t rows = row >= 2 ? m / row : 0;
  if (rows < 2) {
    memcpy(out, in, m * w);
    return;
  }
  gather_any(in, out, rows, row, w, forward);
  const uint64_t done = rows * row;
  memcpy(out + done * w, in + done * w, (m - done) * w);
}

}  // namespace

void to_columns(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t row) {
  columns(in, out, m, w, row, true);
}

void from_columns(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t row) {
  columns(in, out, m, w, row, false);
}

}  // namespace ckptfwd::codec::chain
