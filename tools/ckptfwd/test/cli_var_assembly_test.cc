// ckptfwd export's array making: blocks that tile their global array are assembled, any
// overlap, hole or disagreement falls back to stacking with the reason; blocks copied
// into place; the .npy header numpy reads.
#include <gtest/gtest.h>

#include <numeric>

#include "npy_file.h"
#include "var_assembly.h"

namespace ckptfwd::cli {
namespace {

using Dims = std::vector<uint64_t>;

VarBlock placed(Dims shape, Dims start, Dims global) {
  return {std::move(shape), std::move(global), std::move(start)};
}

TEST(VarAssembly, BlocksThatTileTheGlobalArrayAreAssembled) {
  // A 4x6 array in four 2x3 blocks, given out of order.
  std::vector<VarBlock> b = {placed({2, 3}, {2, 3}, {4, 6}), placed({2, 3}, {0, 0}, {4, 6}),
                             placed({2, 3}, {0, 3}, {4, 6}), placed({2, 3}, {2, 0}, {4, 6})};
  Assembly a;
  ASSERT_EQ(plan_assembly(b, a), "");
  EXPECT_TRUE(a.assembled);
  EXPECT_EQ(a.shape, (Dims{4, 6}));
  EXPECT_EQ(a.at[0], (Dims{2, 3}));
  EXPECT_EQ(a.how, "the 4 files' blocks tile 4x6");
  // Blocks of different shapes tile too.
  ASSERT_EQ(plan_assembly({placed({1, 6}, {0, 0}, {4, 6}), placed({3, 6}, {1, 0}, {4, 6})}, a), "");
  EXPECT_TRUE(a.assembled);
}

TEST(VarAssembly, OverlapsHolesAndDisagreementsAreStackedWithTheReason) {
  Assembly a;
  ASSERT_EQ(plan_assembly({placed({2, 3}, {0, 0}, {4, 3}), placed({2, 3}, {1, 0}, {4, 3})}, a), "");
  EXPECT_FALSE(a.assembled);
  EXPECT_EQ(a.how, "the blocks of files 0 and 1 overlap");
  EXPECT_EQ(a.shape, (Dims{2, 2, 3}));
  EXPECT_EQ(a.at[1], (Dims{1, 0, 0}));
  // An overlap that also leaves a hole, and the same count of elements: still refused.
  ASSERT_EQ(plan_assembly({placed({2, 3}, {0, 0}, {4, 3}), placed({2, 3}, {0, 0}, {4, 3})}, a), "");
  EXPECT_EQ(a.how, "the blocks of files 0 and 1 overlap");
  ASSERT_EQ(plan_assembly({placed({1, 3}, {0, 0}, {4, 3}), placed({1, 3}, {3, 0}, {4, 3})}, a), "");
  EXPECT_FALSE(a.assembled);
  EXPECT_EQ(a.how, "the blocks hold 6 of the global array's 12 elements (holes)");
  ASSERT_EQ(plan_assembly({placed({2, 3}, {0, 0}, {4, 3}), placed({2, 3}, {2, 0}, {5, 3})}, a), "");
  EXPECT_EQ(a.how, "the files disagree on the global shape (4x3, 5x3)");
  ASSERT_EQ(plan_assembly({placed({2, 3}, {0, 0}, {4, 3}), VarBlock{{2, 3}, {}, {}}}, a), "");
  EXPECT_EQ(a.how, "1 of the 2 files have no placement");
  ASSERT_EQ(plan_assembly({VarBlock{{2, 3}, {}, {}}, VarBlock{{2, 3}, {}, {}}}, a), "");
  EXPECT_EQ(a.how, "no file has a placement in a global array");
  // Unplaced blocks of different shapes cannot even be stacked.
  EXPECT_NE(plan_assembly({VarBlock{{2, 3}, {}, {}}, VarBlock{{3, 3}, {}, {}}}, a)
                .find("differ in shape (2x3, 3x3)"),
            std::string::npos);
}

TEST(VarAssembly, OneFileHoldingTheVariableIsItself) {
  Assembly a;
  ASSERT_EQ(plan_assembly({VarBlock{{5, 7}, {}, {}}}, a), "");
  EXPECT_TRUE(a.assembled);
  EXPECT_EQ(a.shape, (Dims{5, 7}));
  EXPECT_EQ(a.how, "one file holds the whole variable");
}

TEST(VarAssembly, CopyBlockPutsRowsInPlace) {
  // A 2x3 block of int32 at (1, 2) of a 4x6 array.
  std::vector<int32_t> src = {1, 2, 3, 4, 5, 6}, dst(24, 0);
  copy_block(reinterpret_cast<const uint8_t*>(src.data()), {2, 3}, {1, 2}, {4, 6}, 4,
             reinterpret_cast<uint8_t*>(dst.data()));
  std::vector<int32_t> want(24, 0);
  want[1 * 6 + 2] = 1, want[1 * 6 + 3] = 2, want[1 * 6 + 4] = 3;
  want[2 * 6 + 2] = 4, want[2 * 6 + 3] = 5, want[2 * 6 + 4] = 6;
  EXPECT_EQ(dst, want);
  // A block of lower rank (stacked): a 3-element row as plane 1 of a 2x1x3 array.
  std::vector<int32_t> d2(6, 0);
  copy_block(reinterpret_cast<const uint8_t*>(src.data()), {3}, {1, 0, 0}, {2, 1, 3}, 4,
             reinterpret_cast<uint8_t*>(d2.data()));
  EXPECT_EQ(d2, (std::vector<int32_t>{0, 0, 0, 1, 2, 3}));
  // A 3-D block.
  std::vector<int32_t> s3(8), d3(27, 0);
  std::iota(s3.begin(), s3.end(), 1);
  copy_block(reinterpret_cast<const uint8_t*>(s3.data()), {2, 2, 2}, {1, 1, 1}, {3, 3, 3}, 4,
             reinterpret_cast<uint8_t*>(d3.data()));
  EXPECT_EQ(d3[1 * 9 + 1 * 3 + 1], 1);
  EXPECT_EQ(d3[1 * 9 + 1 * 3 + 2], 2);
  EXPECT_EQ(d3[1 * 9 + 2 * 3 + 1], 3);
  EXPECT_EQ(d3[2 * 9 + 2 * 3 + 2], 8);
  EXPECT_EQ(std::accumulate(d3.begin(), d3.end(), 0), 36);
}

TEST(NpyFile, DescrKeepsTheByteOrder) {
  EXPECT_EQ(npy_descr("F64LE"), "<f8");
  EXPECT_EQ(npy_descr("F32BE"), ">f4");
  EXPECT_EQ(npy_descr("I32BE"), ">i4");
  EXPECT_EQ(npy_descr("U16LE"), "<u2");
  EXPECT_EQ(npy_descr("I8"), "|i1");
  EXPECT_EQ(npy_descr("U8"), "|u1");
  EXPECT_EQ(npy_descr("CHAR"), "|S1");
  EXPECT_EQ(npy_descr("STR12"), "|S12");
  EXPECT_EQ(npy_descr("CMP16"), "|V16");
  EXPECT_EQ(npy_descr("bytes"), "|u1");
  EXPECT_EQ(npy_descr("X9"), "");
}

TEST(NpyFile, HeaderIsNumpysVersion1) {
  const std::string h = npy_header("<f8", {3, 4});
  ASSERT_EQ(h.size() % 64, 0u);
  EXPECT_EQ(h.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(size_t(uint8_t(h[8])) | size_t(uint8_t(h[9])) << 8, h.size() - 10);
  EXPECT_EQ(h.substr(10, 16), "{'descr': '<f8',");
  EXPECT_NE(h.find("'shape': (3, 4), }"), std::string::npos) << h;
  EXPECT_EQ(h.back(), '\n');
  EXPECT_NE(npy_header("<f8", {5}).find("'shape': (5,), }"), std::string::npos);
  EXPECT_NE(npy_header("<f8", {}).find("'shape': (), }"), std::string::npos);
}

}  // namespace
}  // namespace ckptfwd::cli
