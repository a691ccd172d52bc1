// The whole-byte split of a chunk's stored bytes among the live files that use it
// (stored_bytes.h): proportional, adding up exactly, remainders to the largest fractions.
#include <gtest/gtest.h>

#include <numeric>

#include "stored_bytes.h"

namespace ckptfwd::cli {
namespace {

uint64_t sum(const std::vector<uint64_t>& v) { return std::accumulate(v.begin(), v.end(), 0ull); }

TEST(Apportion, ProportionalAndExact) {
  // 100 bytes among raw uses 1:1:2 -> 25, 25, 50.
  EXPECT_EQ(apportion(100, {10, 10, 20}), (std::vector<uint64_t>{25, 25, 50}));
  // 10 among three equal users: 3.33 each; the remainder byte goes to the first (ties by
  // index), so 4, 3, 3.
  EXPECT_EQ(apportion(10, {7, 7, 7}), (std::vector<uint64_t>{4, 3, 3}));
  // 7 among 1:2:4 -> 1, 2, 4.
  EXPECT_EQ(apportion(7, {1, 2, 4}), (std::vector<uint64_t>{1, 2, 4}));
  // 5 among 1:1:1:1:1:1 (0.833 each): the five largest fractions (all equal) by index.
  EXPECT_EQ(apportion(5, {3, 3, 3, 3, 3, 3}), (std::vector<uint64_t>{1, 1, 1, 1, 1, 0}));
  // Remainders to the largest fractions: 10 among 1:2 -> 3.33, 6.67 -> 3, 7.
  EXPECT_EQ(apportion(10, {1, 2}), (std::vector<uint64_t>{3, 7}));
}

TEST(Apportion, EdgeCases) {
  EXPECT_TRUE(apportion(5, {}).empty());
  EXPECT_EQ(apportion(5, {0, 0}), (std::vector<uint64_t>{5, 0}));
  EXPECT_EQ(apportion(0, {3, 4}), (std::vector<uint64_t>{0, 0}));
  // Large numbers do not overflow: 2^40 bytes among weights near 2^63.
  uint64_t big = 1ull << 62;
  std::vector<uint64_t> w{big, big, big - 1};
  std::vector<uint64_t> s = apportion(1ull << 40, w);
  EXPECT_EQ(sum(s), 1ull << 40);
  EXPECT_LE(s[0] - s[2], 1u);
  for (uint64_t total : {1ull, 17ull, 999983ull})
    EXPECT_EQ(sum(apportion(total, {5, 11, 13, 1})), total);
}

}  // namespace
}  // namespace ckptfwd::cli
