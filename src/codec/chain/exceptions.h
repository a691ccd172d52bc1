// Values a transform cannot represent (fixed-point misses, lossy values out of bound) are
// kept verbatim: side data = count u64 positions (increasing), then count w-byte values.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "codec/chain/load_store.h"

namespace ckptfwd::codec::chain {

struct Exceptions {
  std::vector<uint64_t> positions;
  std::vector<uint8_t> values;
  void add(uint64_t pos, const uint8_t* v, uint32_t w) {
    positions.push_back(pos);
    values.insert(values.end(), v, v + w);
  }
  void append_to(std::vector<uint8_t>& side) const {
    size_t at = side.size();
    side.resize(at + positions.size() * 8 + values.size());
    for (uint64_t p : positions) {
      store<uint64_t>(side.data() + at, p);
      at += 8;
    }
    if (!values.empty()) memcpy(side.data() + at, values.data(), values.size());
  }
};

// Writes the count exceptions of side over out; false on a position out of order or range.
// swap_out: out holds its values byte-swapped (w 2, 4 or 8), and so do the patched ones.
inline bool patch_exceptions(const uint8_t* side, uint64_t count, uint8_t* out, uint64_t m,
                             uint32_t w, bool swap_out = false) {
  const uint8_t* values = side + count * 8;
  uint64_t next_min = 0;
  for (uint64_t k = 0; k < count; ++k) {
    uint64_t pos = load<uint64_t>(side + 8 * k);
    if (pos < next_min || pos >= m) return false;
    if (swap_out) {
      for (uint32_t b = 0; b < w; ++b) out[pos * w + b] = values[k * w + (w - 1 - b)];
    } else {
      memcpy(out + pos * w, values + k * w, w);
    }
    next_min = pos + 1;
  }
  return true;
}

// Narrows m int64 values in place to int32 when all fit; returns the width used.
inline uint8_t narrow_if_fits(uint8_t* buf, uint64_t m, int64_t lo, int64_t hi) {
  if (lo < INT32_MIN || hi > INT32_MAX) return 8;
  for (uint64_t i = 0; i < m; ++i)
    store<int32_t>(buf + 4 * i, static_cast<int32_t>(load<int64_t>(buf + 8 * i)));
  return 4;
}

// Reads integer i of a width-byte (4 or 8) signed stream.
inline int64_t load_int(const uint8_t* buf, uint64_t i, uint8_t width) {
  return width == 4 ? load<int32_t>(buf + 4 * i) : load<int64_t>(buf + 8 * i);
}

}  // namespace ckptfwd::codec::chain
