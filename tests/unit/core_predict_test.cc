// The predictors on the integer bit patterns: the forward pass (scalar first rows and
// first columns, vector lanes in the body of later rows) gives x - pred(x) (zigzagged on
// request) exactly as the definition in transforms.h says, for every width, row width
// and length, and unpredict gives the elements back.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "codec/chain/transforms.h"

namespace ckptfwd::codec::chain {
namespace {

template <class T>
std::vector<uint8_t> reference(Step kind, bool zigzag, const std::vector<uint8_t>& in, uint64_t m,
                               uint64_t row) {
  auto at = [&](uint64_t k) {
    T v;
    memcpy(&v, in.data() + k * sizeof(T), sizeof(T));
    return v;
  };
  std::vector<uint8_t> out(in.size());
  for (uint64_t i = 0; i < m; ++i) {
    T p;
    if (i < row)
      p = i ? at(i - 1) : T(0);
    else if (kind == Step::kPrevRow || i % row == 0)
      p = at(i - row);
    else
      p = static_cast<T>(at(i - 1) + at(i - row) - at(i - row - 1));
    T r = static_cast<T>(at(i) - p);
    if (zigzag) {
      using S = std::make_signed_t<T>;
      r = static_cast<T>((r << 1) ^ static_cast<T>(static_cast<S>(r) >> (sizeof(T) * 8 - 1)));
    }
    memcpy(out.data() + i * sizeof(T), &r, sizeof(T));
  }
  return out;
}

template <class T>
void check_width() {
  for (Step kind : {Step::kPrevRow, Step::kLorenzo})
    for (bool zig : {false, true})
      for (uint64_t row : {1ull, 2ull, 3ull, 7ull, 16ull, 33ull})
        for (uint64_t m : {0ull, 1ull, 5ull, 40ull, 333ull}) {
          std::vector<uint8_t> in(m * sizeof(T)), out(in.size()), back(in.size());
          uint64_t x = 0x9e3779b97f4a7c15ull;
          for (uint64_t i = 0; i < m; ++i) {  // smooth with noise, both signs of residual
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            T v = static_cast<T>(1000 + 3 * i + ((x >> 40) % 64) - 32);
            memcpy(in.data() + i * sizeof(T), &v, sizeof(T));
          }
          predict(kind, zig, in.data(), out.data(), m, sizeof(T), row);
          ASSERT_EQ(out, reference<T>(kind, zig, in, m, std::min(row, m ? m : 1)))
              << sizeof(T) << "-byte, kind " << int(kind) << " zig " << zig << " row " << row
              << " m " << m;
          unpredict(kind, zig, out.data(), back.data(), m, sizeof(T), row);
          ASSERT_EQ(back, in) << sizeof(T) << "-byte, kind " << int(kind) << " row " << row;
        }
}

// unpredict_range, the block decoder's inverse (vector lanes for 32- and 64-bit elements),
// block after block of odd lengths into one buffer, gives the elements back whatever
// column a block starts or ends in.
template <class T>
void check_range_width() {
  for (Step kind : {Step::kDelta, Step::kPrevRow, Step::kLorenzo})
    for (bool zig : {false, true})
      for (uint64_t row : {1ull, 2ull, 3ull, 7ull, 16ull, 33ull})
        for (uint64_t block : {1ull, 2ull, 5ull, 13ull, 64ull, 1000ull}) {
          const uint64_t m = 333;
          std::vector<uint8_t> in(m * sizeof(T)), res(in.size()), back(in.size(), 0xAB);
          uint64_t x = 0x243f6a8885a308d3ull;
          for (uint64_t i = 0; i < m; ++i) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            T v = static_cast<T>(x >> (64 - 8 * sizeof(T)));  // every bit pattern
            if (i % 3) v = static_cast<T>(1000 + 3 * i + ((x >> 40) % 64) - 32);
            memcpy(in.data() + i * sizeof(T), &v, sizeof(T));
          }
          predict(kind, zig, in.data(), res.data(), m, sizeof(T), row);
          for (uint64_t i0 = 0; i0 < m; i0 += block)
            unpredict_range(kind, zig, res.data() + i0 * sizeof(T), back.data() + i0 * sizeof(T),
                            i0, std::min(block, m - i0), sizeof(T), row);
          ASSERT_EQ(back, in) << sizeof(T) << "-byte, kind " << int(kind) << " zig " << zig
                              << " row " << row << " block " << block;
        }
}

TEST(Predict, TheBlockInverseGivesTheElementsBackAtEveryBlockBoundary) {
  check_range_width<uint8_t>();
  check_range_width<uint16_t>();
  check_range_width<uint32_t>();
  check_range_width<uint64_t>();
}

TEST(Predict, TwoDimensionalKindsMatchTheirDefinitionAndInvert) {
  check_width<uint8_t>();
  check_width<uint16_t>();
  check_width<uint32_t>();
  check_width<uint64_t>();
}

}  // namespace
}  // namespace ckptfwd::codec::chain
