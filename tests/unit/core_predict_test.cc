// The predictors on the integer bit patterns: the forward pass (scalar first rows and
// first columns, vector lanes in the body of later rows) gives x - pred(x) (zigzagged on
// request) exactly as the definition in transforms.h says, for every width, row width
// and length, and unpredict gives the elements back.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "codec/chain/transforms.h"

namespace ckptfwd::codec::chain {
namespace {

template <class T>
T element(const std::vector<uint8_t>& in, uint64_t k) {
  T v;
  memcpy(&v, in.data() + k * sizeof(T), sizeof(T));
  return v;
}

// out's element i: x - p, zigzagged on request.
template <class T>
void put_residual(std::vector<uint8_t>& out, uint64_t i, T x, T p, bool zigzag) {
  T r = static_cast<T>(x - p);
  if (zigzag) {
    using S = std::make_signed_t<T>;
    r = static_cast<T>((r << 1) ^ static_cast<T>(static_cast<S>(r) >> (sizeof(T) * 8 - 1)));
  }
  memcpy(out.data() + i * sizeof(T), &r, sizeof(T));
}

// m values of T from seed: smooth with noise (residuals of both signs), and with wild > 0
// every wild-th one any bit pattern.
template <class T>
std::vector<uint8_t> test_values(uint64_t m, uint64_t seed, uint64_t wild) {
  std::vector<uint8_t> in(m * sizeof(T));
  uint64_t x = seed;
  for (uint64_t i = 0; i < m; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    T v = static_cast<T>(1000 + 3 * i + ((x >> 40) % 64) - 32);
    if (wild && i % wild == 0) v = static_cast<T>(x >> (64 - 8 * sizeof(T)));
    memcpy(in.data() + i * sizeof(T), &v, sizeof(T));
  }
  return in;
}

template <class T>
std::vector<uint8_t> reference(Step kind, bool zigzag, const std::vector<uint8_t>& in, uint64_t m,
                               uint64_t row) {
  auto at = [&](uint64_t k) { return element<T>(in, k); };
  std::vector<uint8_t> out(in.size());
  for (uint64_t i = 0; i < m; ++i) {
    T p;
    if (i < row)
      p = i ? at(i - 1) : T(0);
    else if (kind == Step::kPrevRow || i % row == 0)
      p = at(i - row);
    else
      p = static_cast<T>(at(i - 1) + at(i - row) - at(i - row - 1));
    put_residual<T>(out, i, at(i), p, zigzag);
  }
  return out;
}

template <class T>
void check_width() {
  for (Step kind : {Step::kPrevRow, Step::kLorenzo})
    for (bool zig : {false, true})
      for (uint64_t row : {1ull, 2ull, 3ull, 7ull, 16ull, 33ull})
        for (uint64_t m : {0ull, 1ull, 5ull, 40ull, 333ull}) {
          const std::vector<uint8_t> in = test_values<T>(m, 0x9e3779b97f4a7c15ull, 0);
          std::vector<uint8_t> out(in.size()), back(in.size());
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
          const std::vector<uint8_t> in = test_values<T>(m, 0x243f6a8885a308d3ull, 3);
          std::vector<uint8_t> res(in.size()), back(in.size(), 0xAB);
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

// kLorenzo3 by its definition: the sum of the seven corners of the cube behind the element
// with signs, a corner outside the grid (x, y or z below 0) counting as 0.
template <class T>
std::vector<uint8_t> reference3(bool zigzag, const std::vector<uint8_t>& in, uint64_t m,
                                uint64_t row, uint64_t plane) {
  auto at = [&](uint64_t k) { return element<T>(in, k); };
  std::vector<uint8_t> out(in.size());
  for (uint64_t i = 0; i < m; ++i) {
    const uint64_t x = i % row, y = (i % plane) / row, z = i / plane;
    T p = 0;
    for (uint64_t dz : {0, 1})
      for (uint64_t dy : {0, 1})
        for (uint64_t dx : {0, 1}) {
          if (!(dx | dy | dz) || dx > x || dy > y || dz > z) continue;
          T v = at(i - dx - dy * row - dz * plane);
          p = (dx + dy + dz) % 2 ? static_cast<T>(p + v) : static_cast<T>(p - v);
        }
    put_residual<T>(out, i, at(i), p, zigzag);
  }
  return out;
}

template <class T>
T swapped(T v) {
  T s;
  for (size_t b = 0; b < sizeof(T); ++b)
    reinterpret_cast<uint8_t*>(&s)[b] = reinterpret_cast<const uint8_t*>(&v)[sizeof(T) - 1 - b];
  return s;
}

template <class T>
void check_3d_width() {
  struct Grid {
    uint64_t ny, nx;
  };
  for (bool zig : {false, true})
    for (Grid g : {Grid{2, 3}, Grid{3, 7}, Grid{5, 16}, Grid{1, 9}, Grid{4, 1}})
      for (uint64_t m : {0ull, 1ull, 5ull, 40ull, 333ull}) {
        const std::vector<uint8_t> in = test_values<T>(m, 0x13198a2e03707344ull, 4);
        std::vector<uint8_t> out(in.size()), back(in.size()), blocks(in.size(), 0xAB);
        const uint64_t row = predictor_row(g.nx, m);
        const uint64_t plane = predictor_plane({g.ny, g.nx}, row, m);
        const std::string what = std::to_string(sizeof(T)) + "-byte, zig " + std::to_string(zig) +
                                 " grid " + std::to_string(g.ny) + "x" + std::to_string(g.nx) +
                                 " m " + std::to_string(m);
        predict(Step::kLorenzo3, zig, in.data(), out.data(), m, sizeof(T), g.nx, plane);
        if (plane) {
          ASSERT_EQ(out, reference3<T>(zig, in, m, row, plane)) << what;
        } else {  // no whole plane short of m: the 2-D Lorenzo
          std::vector<uint8_t> two_d(in.size());
          predict(Step::kLorenzo, zig, in.data(), two_d.data(), m, sizeof(T), g.nx);
          ASSERT_EQ(out, two_d) << what;
        }
        unpredict(Step::kLorenzo3, zig, out.data(), back.data(), m, sizeof(T), g.nx, false, plane);
        ASSERT_EQ(back, in) << what;
        unpredict(Step::kLorenzo3, zig, out.data(), back.data(), m, sizeof(T), g.nx, true, plane);
        for (uint64_t i = 0; i < m; ++i) {
          ASSERT_EQ(swapped(element<T>(in, i)), element<T>(back, i))
              << what << " (swapped) at " << i;
        }
        for (uint64_t i0 = 0, block = 1; i0 < m; i0 += block, block = block * 2 + 1)
          unpredict_range(Step::kLorenzo3, zig, out.data() + i0 * sizeof(T),
                          blocks.data() + i0 * sizeof(T), i0, std::min(block, m - i0), sizeof(T),
                          row, plane);
        ASSERT_EQ(blocks, in) << what << " (blocks)";
      }
}

TEST(Predict, ThreeDimensionalLorenzoMatchesItsDefinitionAndInverts) {
  check_3d_width<uint8_t>();
  check_3d_width<uint16_t>();
  check_3d_width<uint32_t>();
  check_3d_width<uint64_t>();
}

TEST(Predict, APlaneIsUsedOnlyWhenItIsWholeRowsShortOfTheChunk) {
  EXPECT_EQ(predictor_plane({4, 8}, 8, 100), 32u);
  EXPECT_EQ(predictor_plane({4, 8}, 8, 32), 0u) << "one plane: nothing behind it";
  EXPECT_EQ(predictor_plane({1, 8}, 8, 100), 0u) << "a plane of one row is the 2-D case";
  EXPECT_EQ(predictor_plane({8}, 8, 100), 0u);
  EXPECT_EQ(predictor_plane({1ull << 40, 1ull << 40}, 1ull << 40, ~0ull), 0u) << "overflow";
  EXPECT_EQ(predictor_plane({4, 8}, 100, 1000), 0u) << "rows of another width";
}

}  // namespace
}  // namespace ckptfwd::codec::chain
