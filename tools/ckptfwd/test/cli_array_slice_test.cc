// numpy basic slicing (array_slice.h): the offsets and shapes numpy gives for the same
// slice of np.arange(n).reshape(shape) (values noted from numpy).
#include <gtest/gtest.h>

#include "array_slice.h"

namespace ckptfwd::cli {
namespace {

struct Got {
  std::string err;
  std::vector<uint64_t> shape, offsets;
};

Got slice(const std::string& text, const std::vector<uint64_t>& shape) {
  ArraySlice s;
  Got g;
  g.err = parse_slice(text, s);
  if (g.err.empty()) g.err = resolve_slice(s, shape, g.shape, g.offsets);
  return g;
}

using V = std::vector<uint64_t>;

TEST(ArraySlice, MatchesNumpy) {
  // np.arange(24).reshape(4, 6)[1:3, ::2] -> [[6, 8, 10], [12, 14, 16]]
  Got g = slice("1:3,::2", {4, 6});
  EXPECT_EQ(g.err, "");
  EXPECT_EQ(g.shape, (V{2, 3}));
  EXPECT_EQ(g.offsets, (V{6, 8, 10, 12, 14, 16}));
  // a[-1] -> row 3, dimension dropped
  g = slice("[-1]", {4, 6});
  EXPECT_EQ(g.shape, (V{6}));
  EXPECT_EQ(g.offsets, (V{18, 19, 20, 21, 22, 23}));
  // a[::-2, 4] -> [22, 10]
  g = slice("::-2, 4", {4, 6});
  EXPECT_EQ(g.shape, (V{2}));
  EXPECT_EQ(g.offsets, (V{22, 10}));
  // a[2:100, -100:2] -> [[12, 13], [18, 19]] (clipped)
  g = slice("2:100,-100:2", {4, 6});
  EXPECT_EQ(g.shape, (V{2, 2}));
  EXPECT_EQ(g.offsets, (V{12, 13, 18, 19}));
  // a[3:1] -> empty (0, 6)
  g = slice("3:1", {4, 6});
  EXPECT_EQ(g.shape, (V{0, 6}));
  EXPECT_TRUE(g.offsets.empty());
  // a[3:0:-1, -1] -> [23, 17, 11]
  g = slice("3:0:-1,-1", {4, 6});
  EXPECT_EQ(g.offsets, (V{23, 17, 11}));
  // a[1, 2] of a 3-D array: shape (4,)
  g = slice("1,2", {2, 3, 4});
  EXPECT_EQ(g.shape, (V{4}));
  EXPECT_EQ(g.offsets, (V{20, 21, 22, 23}));
}

TEST(ArraySlice, BadSlicesSayWhy) {
  EXPECT_NE(slice("", {4}).err.find("empty"), std::string::npos);
  EXPECT_NE(slice("1:2:0", {4}).err.find("step of 0"), std::string::npos);
  EXPECT_NE(slice("a:2", {4}).err.find("integers"), std::string::npos);
  EXPECT_NE(slice("1:2:3:4", {4}).err.find("more than two"), std::string::npos);
  EXPECT_NE(slice("x", {4}).err.find("neither"), std::string::npos);
  EXPECT_NE(slice("4", {4}).err.find("outside dimension 0"), std::string::npos);
  EXPECT_NE(slice("-5", {4}).err.find("outside"), std::string::npos);
  EXPECT_NE(slice("0,0", {4}).err.find("2 dimensions of an array of 1"), std::string::npos);
}

}  // namespace
}  // namespace ckptfwd::cli
