// The element readers and statistics of `ckptfwd dump` (var_values.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "var_values.h"

namespace ckptfwd::cli {
namespace {

TEST(VarValues, EveryNumericDtypeReadsInItsByteOrder) {
  const uint8_t be[] = {0xff, 0xfe};
  EXPECT_EQ(numeric_dtype("I16BE").value(be, 0), -2);
  EXPECT_EQ(numeric_dtype("U16BE").value(be, 0), 65534);
  EXPECT_EQ(numeric_dtype("I16LE").value(be, 0), -257);
  EXPECT_EQ(numeric_dtype("I8").value(be, 1), -2);
  EXPECT_EQ(numeric_dtype("U8").text(be, 1), "254");
  const uint8_t i64[] = {0x80, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(numeric_dtype("I64BE").text(i64, 0), "-9223372036854775808");
  EXPECT_EQ(numeric_dtype("U64BE").text(i64, 0), "9223372036854775808");
  EXPECT_EQ(numeric_dtype("I64LE").text(i64, 0), "128");
  const uint8_t f32be[] = {0x3f, 0xc0, 0, 0};  // 1.5
  EXPECT_EQ(numeric_dtype("F32BE").value(f32be, 0), 1.5);
  double third = 1.0 / 3;
  uint8_t f64le[8];
  memcpy(f64le, &third, 8);
  const NumericDtype d = numeric_dtype("F64LE");
  EXPECT_EQ(std::strtod(d.text(f64le, 0).c_str(), nullptr), third);  // reads back exactly
  float tenth = 0.1f;
  uint8_t f32le[4];
  memcpy(f32le, &tenth, 4);
  EXPECT_EQ(std::strtof(numeric_dtype("F32LE").text(f32le, 0).c_str(), nullptr), tenth);
}

TEST(VarValues, TextAndOpaqueDtypesAreNotNumbers) {
  for (const char* name : {"CHAR", "STR8", "CMP12", "B4", "bytes", "F16LE", "nope"})
    EXPECT_FALSE(numeric_dtype(name).ok) << name;
  EXPECT_TRUE(numeric_dtype("U32BE").ok);
}

TEST(VarValues, StatsLeaveNaNsOutOfMinMaxAndMean) {
  ValueStats a, b, none;
  for (double v : {3.0, std::nan(""), -1.0, 7.0}) a.add(v);
  EXPECT_EQ(a.count, 4u);
  EXPECT_EQ(a.nans, 1u);
  EXPECT_EQ(a.min, -1);
  EXPECT_EQ(a.max, 7);
  EXPECT_EQ(a.mean(), 3);
  none.add(std::nan(""));
  b.merge(none);  // only NaNs: no min or max to take
  b.merge(a);
  EXPECT_EQ(b.count, 5u);
  EXPECT_EQ(b.nans, 2u);
  EXPECT_EQ(b.min, -1);
  EXPECT_EQ(b.max, 7);
  b.add(-5);
  EXPECT_EQ(b.min, -5);
}

}  // namespace
}  // namespace ckptfwd::cli
