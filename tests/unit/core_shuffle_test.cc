// Byte shuffle and its inverse: the vector paths (2-, 4- and 8-byte elements) and the
// scalar ones give byte b of element i at b * m + i, for whole streams and for element
// ranges that start and end anywhere (a chunk's rows), and unshuffle undoes shuffle.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "codec/chain/transforms.h"

namespace ckptfwd::codec::chain {
namespace {

std::vector<uint8_t> elements(uint64_t m, uint32_t w) {
  std::vector<uint8_t> v(m * w);
  uint32_t x = 12345;
  for (uint8_t& b : v) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 16);
  return v;
}

TEST(Shuffle, EveryWidthAndLengthPutsByteBOfElementIAtBTimesMPlusI) {
  for (uint32_t w : {1u, 2u, 3u, 4u, 8u, 16u})
    for (uint64_t m : {0ull, 1ull, 15ull, 16ull, 17ull, 33ull, 1000ull}) {
      std::vector<uint8_t> in = elements(m, w), planes(m * w), back(m * w);
      shuffle(in.data(), planes.data(), m, w);
      for (uint64_t i = 0; i < m; ++i)
        for (uint32_t b = 0; b < w; ++b)
          ASSERT_EQ(planes[b * m + i], in[i * w + b]) << "w " << w << " m " << m << " i " << i;
      unshuffle(planes.data(), back.data(), m, w);
      EXPECT_EQ(back, in) << "w " << w << " m " << m;
    }
}

TEST(Shuffle, RangesStartingAndEndingAnywhereMatchTheWholeStream) {
  const uint64_t m = 301;
  for (uint32_t w : {2u, 4u, 8u}) {
    std::vector<uint8_t> in = elements(m, w), whole(m * w), pieces(m * w);
    shuffle(in.data(), whole.data(), m, w);
    for (uint64_t step : {1ull, 7ull, 16ull, 45ull, 300ull})
      for (uint64_t i0 = 0; i0 < m; i0 += step) {
        uint64_t n = std::min(step, m - i0);
        shuffle_range(in.data() + i0 * w, pieces.data(), m, w, i0, n);
      }
    EXPECT_EQ(pieces, whole) << "w " << w;
    std::vector<uint8_t> back(m * w);
    for (uint64_t i0 = 0; i0 < m; i0 += 37)
      unshuffle_range(whole.data(), back.data() + i0 * w, m, w, i0, std::min<uint64_t>(37, m - i0));
    EXPECT_EQ(back, in) << "w " << w;
  }
}

}  // namespace
}  // namespace ckptfwd::codec::chain
