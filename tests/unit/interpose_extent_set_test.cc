// The extents a process records for a version shared across nodes: merged exactly, never
// over-covered (a gap must stay a gap: another node may own those bytes).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "interpose/track/extent_set.h"

namespace ckptfwd::interpose {
namespace {

std::vector<std::pair<uint64_t, uint64_t>> dump(const ExtentSet& s) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (size_t i = 0; i < s.n; ++i) out.push_back({s.iv[i][0], s.iv[i][1]});
  return out;
}

TEST(InterposeExtentSet, MergesOverlappingAndAdjacentOnly) {
  ExtentSet s;
  ASSERT_TRUE(extent_set_add(s, 100, 200));
  ASSERT_TRUE(extent_set_add(s, 300, 400));
  ASSERT_TRUE(extent_set_add(s, 0, 50));
  EXPECT_EQ(dump(s), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 50}, {100, 200}, {300, 400}}));
  ASSERT_TRUE(extent_set_add(s, 200, 250));  // adjacent on the right
  ASSERT_TRUE(extent_set_add(s, 50, 60));    // adjacent on the left... of nothing: joins 0-50
  EXPECT_EQ(dump(s), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 60}, {100, 250}, {300, 400}}));
  ASSERT_TRUE(extent_set_add(s, 150, 350));  // spans two
  EXPECT_EQ(dump(s), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 60}, {100, 400}}));
  ASSERT_TRUE(extent_set_add(s, 61, 99));  // gaps of one byte stay gaps
  EXPECT_EQ(dump(s), (std::vector<std::pair<uint64_t, uint64_t>>{{0, 60}, {61, 99}, {100, 400}}));
  extent_set_free(s);
}

TEST(InterposeExtentSet, MatchesABitmapOnRandomWrites) {
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    ExtentSet s;
    std::vector<bool> bits(5000, false);
    for (int k = 0; k < 300; ++k) {
      uint64_t b = rng() % 4900, len = 1 + rng() % 60;
      ASSERT_TRUE(extent_set_add(s, b, b + len));
      for (uint64_t i = b; i < b + len; ++i) bits[i] = true;
    }
    std::vector<bool> got(5000, false);
    for (size_t i = 0; i < s.n; ++i) {
      ASSERT_LT(s.iv[i][0], s.iv[i][1]);
      if (i) {
        ASSERT_LT(s.iv[i - 1][1], s.iv[i][0]) << "sorted, disjoint, not adjacent";
      }
      for (uint64_t x = s.iv[i][0]; x < s.iv[i][1]; ++x) got[x] = true;
    }
    EXPECT_EQ(got, bits);
    extent_set_free(s);
  }
}

}  // namespace
}  // namespace ckptfwd::interpose
