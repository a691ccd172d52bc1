// The netCDF writer of `ckptfwd export --to OUT.nc` (nc_out.h), read back by the netCDF
// classic parser of structure inference (schema/netcdf_classic.h), which checks every
// count, offset and size against the format.
#include <gtest/gtest.h>

#include <cstring>

#include "core_test_util.h"
#include "nc_out.h"
#include "schema/netcdf_classic.h"

namespace ckptfwd::cli {
namespace {

TEST(NcOut, VariablesReadBackBigEndianWithTheirShapes) {
  test::TempDir d;
  std::vector<double> t(2 * 3 * 4);
  for (size_t i = 0; i < t.size(); ++i) t[i] = 0.5 * double(i) - 3;
  std::vector<uint16_t> u = {1, 2, 0x1234};  // 6 bytes: padded to 8 in the file
  std::vector<NcVar> vars = {
      {"/fields/T",
       "F64LE",
       {2, 3, 4},
       reinterpret_cast<const uint8_t*>(t.data()),
       Json{{"how", "tiled"}, {"ranks", {0, 1}}, {"bound", 0.25}, {"assembled", true}}},
      {"u", "U16LE", {3}, reinterpret_cast<const uint8_t*>(u.data()), Json::object()}};
  std::string err;
  ASSERT_TRUE(write_nc(d / "a.nc", vars, &err)) << err;
  const std::vector<uint8_t> f = test::read_all(d / "a.nc");
  VariableMap m;
  std::string why;
  ASSERT_TRUE(schema::infer_netcdf_classic(f.data(), f.size(), m, &why)) << why;
  EXPECT_EQ(m.detail, "CDF-5");
  ASSERT_EQ(m.vars.size(), 2u);
  EXPECT_EQ(m.vars[0].name, "_fields_T");
  EXPECT_EQ(m.vars[0].dtype, "F64BE");
  EXPECT_EQ(m.vars[0].shape, (std::vector<uint64_t>{2, 3, 4}));
  EXPECT_EQ(m.vars[1].dtype, "U16BE");
  ASSERT_EQ(m.vars[0].extents.size(), 1u);
  const VarExtent& x = m.vars[0].extents[0];
  ASSERT_EQ(x.len, t.size() * 8);
  for (size_t i = 0; i < t.size(); ++i) {
    uint8_t be[8];
    memcpy(be, &t[i], 8);
    for (int k = 0; k < 8; ++k) EXPECT_EQ(f[x.file_off + 8 * i + k], be[7 - k]) << i;
  }
  const VarExtent& y = m.vars[1].extents[0];
  EXPECT_EQ(f[y.file_off + 4], 0x12);
  EXPECT_EQ(f[y.file_off + 5], 0x34);
  EXPECT_EQ(f.size(), y.file_off + 8);  // the last variable padded to 4 bytes
}

TEST(NcOut, RefusesWhatNetcdfCannotHold) {
  test::TempDir d;
  const uint8_t c[4] = {'a', 'b', 'c', 'd'};
  std::string err;
  EXPECT_FALSE(write_nc(d / "c.nc", {{"s", "STR4", {1}, c, Json::object()}}, &err));
  EXPECT_NE(err.find("no netCDF number type"), std::string::npos) << err;
  EXPECT_FALSE(write_nc(d / "no/such/dir/x.nc", {{"b", "U8", {4}, c, Json::object()}}, &err));
  EXPECT_NE(err.find("cannot create"), std::string::npos) << err;
  EXPECT_EQ(nc_name("9lives/x y"), "_9lives_x_y");
}

}  // namespace
}  // namespace ckptfwd::cli
