// The Inferrer's own logic (src/schema/infer.cc, rename.cc): MPI-IO dtype hints as
// variables, the rename rule and its errors, the order of sources and what happens when
// inference is switched off. The parsers have their own tests.
#include <gtest/gtest.h>

#include <cstring>

#include "base/dtype.h"
#include "schema/infer.h"
#include "schema/rename.h"

namespace ckptfwd::schema {
namespace {

constexpr uint8_t kF64 = static_cast<uint8_t>(DtypeCode::kF64LE);
constexpr uint8_t kI32 = static_cast<uint8_t>(DtypeCode::kI32LE);

TEST(InferHints, OneVariablePerDtypeWithOneExtentPerRun) {
  std::vector<DtypeHint> hints = {{0, 80, kF64}, {80, 12, kI32}, {100, 20, kF64}};
  VariableMap m = variables_from_hints(hints, 1000);
  ASSERT_EQ(m.source, "mpiio");
  ASSERT_EQ(m.vars.size(), 2u);
  EXPECT_EQ(m.vars[0].key, "mpiio/view_F64LE_Array1D");
  EXPECT_EQ(m.vars[0].shape, std::vector<uint64_t>{12});  // 10 + 2 doubles
  ASSERT_EQ(m.vars[0].extents.size(), 2u);
  // A run of 20 bytes holds 2 whole doubles: the odd 4 bytes stay residual.
  EXPECT_EQ(m.vars[0].extents[1].len, 16u);
  EXPECT_EQ(m.vars[0].extents[1].start, std::vector<uint64_t>{10});
  EXPECT_EQ(m.vars[1].key, "mpiio/view_I32LE_Array1D");
  EXPECT_EQ(check_variable_map(m, 1000), "");
  // Hints past the end of a (truncated) file are clipped, not trusted.
  VariableMap small = variables_from_hints(hints, 50);
  EXPECT_EQ(check_variable_map(small, 50), "");
  EXPECT_EQ(mapped_bytes(small), 48u);
}

ViewShape view(uint64_t disp, uint8_t dtype, std::vector<uint64_t> g) {
  ViewShape v;
  v.disp = disp;
  v.dtype = dtype;
  v.ndims = static_cast<uint32_t>(g.size());
  for (size_t d = 0; d < g.size(); ++d) v.gsizes[d] = g[d];
  return v;
}

TEST(InferViews, EachViewInsideTheFileIsAGlobalArray) {
  // A 100-byte header, an int32 4x5 at 100, a float64 3x2 right after it (180..228), a
  // view overlapping the first and one past the end of the file.
  std::vector<ViewShape> views = {view(180, kF64, {3, 2}), view(100, kI32, {4, 5}),
                                  view(120, kF64, {2}), view(228, kF64, {100})};
  std::vector<DtypeHint> hints = {{0, 8, kF64}, {100, 128, kI32}, {228, 16, kF64}};
  VariableMap m = variables_from_views(views, hints, 300);
  ASSERT_EQ(m.source, "mpiio");
  ASSERT_EQ(m.vars.size(), 3u);
  EXPECT_EQ(m.vars[0].key, "mpiio/array0_I32LE_Array2D");
  EXPECT_EQ(m.vars[0].shape, (std::vector<uint64_t>{4, 5}));
  EXPECT_EQ(m.vars[0].extents[0].file_off, 100u);
  EXPECT_EQ(m.vars[1].key, "mpiio/array1_F64LE_Array2D");
  EXPECT_EQ(m.vars[1].extents[0].file_off, 180u);
  EXPECT_EQ(m.vars[1].extents[0].len, 48u);
  // The hinted bytes outside the views: [0, 8) and [228, 244) as doubles.
  EXPECT_EQ(m.vars[2].key, "mpiio/view_F64LE_Array1D");
  EXPECT_EQ(m.vars[2].shape, std::vector<uint64_t>{3});
  EXPECT_EQ(check_variable_map(m, 300), "");
  EXPECT_TRUE(variables_from_views({view(228, kF64, {100})}, hints, 300).vars.empty());
}

TEST(InferViews, ViewsComeBeforeHintsAndAfterSelfDescribingFormats) {
  Inferrer inf;
  Config cfg;
  std::string err;
  ASSERT_TRUE(inf.configure(cfg, &err)) << err;
  std::vector<uint8_t> data(240, 1);
  std::string note;
  VariableMap m = inf.infer("/x", "/x", data.data(), data.size(), {{0, 240, kF64}}, &note, -1,
                            {view(0, kF64, {6, 5})});
  ASSERT_EQ(m.vars.size(), 1u);
  EXPECT_EQ(m.vars[0].key, "mpiio/array0_F64LE_Array2D");
  m = inf.infer("/x", "/x", data.data(), data.size(), {{0, 240, kF64}}, &note, -1,
                {view(8, kF64, {6, 5})});  // past the end: the hints' map, with a note
  EXPECT_EQ(m.vars[0].key, "mpiio/view_F64LE_Array1D");
  EXPECT_NE(note.find("MPI-IO views"), std::string::npos) << note;
}

TEST(Rename, SedSyntaxWithGroupsAndFlags) {
  VarRename r;
  std::string err;
  ASSERT_TRUE(r.add("s/_r[0-9]+$//", &err)) << err;
  EXPECT_EQ(r.apply("temp_r0003"), "temp");
  EXPECT_EQ(r.apply("temp_r12x"), "temp_r12x");
  VarRename g;
  ASSERT_TRUE(g.add("s|step([0-9]+)/(.*)|\\2@\\1|", &err)) << err;
  EXPECT_EQ(g.apply("step12/u"), "u@12");
  VarRename all;
  ASSERT_TRUE(all.add("s/a/b/g", &err)) << err;
  EXPECT_EQ(all.apply("aXa"), "bXb");
  VariableMap m;
  Variable v;
  v.name = "/fields/temp_r0007";
  v.dtype = "F32LE";
  v.elem_size = 4;
  v.shape = {4};
  v.key = var_key(v.name, v.dtype, 1);
  m.vars.push_back(v);
  r.apply(m);
  EXPECT_EQ(m.vars[0].key, "fields/temp_F32LE_Array1D");
  EXPECT_EQ(m.vars[0].name, "/fields/temp_r0007");  // the file's own name is kept
}

TEST(Rename, BadRulesSayWhy) {
  const char* bad[][2] = {{"x/a/b/", "'s'"},        {"s/a/b", "three delimiters"},
                          {"s//b/", "empty REGEX"}, {"s/a/b/q", "unknown flag"},
                          {"s/(/b/", "bad REGEX"},  {"sa/b/c", "delimiter"}};
  for (auto& c : bad) {
    VarRename r;
    std::string err;
    EXPECT_FALSE(r.add(c[0], &err)) << c[0];
    EXPECT_NE(err.find(c[1]), std::string::npos) << c[0] << ": " << err;
    EXPECT_NE(err.find("s/REGEX/REPLACEMENT/"), std::string::npos) << err;
  }
}

TEST(Inferrer, OffMeansAgnosticAndBadRenameIsAConfigError) {
  Config cfg;
  cfg.infer = false;
  Inferrer inf;
  std::string err;
  ASSERT_TRUE(inf.configure(cfg, &err)) << err;
  std::vector<DtypeHint> hints = {{0, 80, kF64}};
  std::vector<uint8_t> data(100);
  std::string note;
  VariableMap m = inf.infer("/x", "/x", data.data(), data.size(), hints, &note);
  EXPECT_TRUE(m.source.empty());
  EXPECT_NE(m.detail.find("CKPTFWD_INFER=0"), std::string::npos);
  Config bad;
  bad.var_rename = "s/(/x/";
  EXPECT_FALSE(inf.configure(bad, &err));
  EXPECT_NE(err.find("CKPTFWD_VAR_RENAME"), std::string::npos) << err;
}

TEST(Inferrer, FailedSourceIsNotedAndTheNextOneUsed) {
  Config cfg;
  Inferrer inf;
  std::string err;
  ASSERT_TRUE(inf.configure(cfg, &err)) << err;
  inf.set_hdf5_helper("/nonexistent/ckptfwd-h5infer");
  // An HDF5 signature the helper cannot read, with MPI-IO hints: the hints win, and the
  // HDF5 failure is in the note.
  std::vector<uint8_t> data(4096, 0);
  const uint8_t sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  memcpy(data.data(), sig, 8);
  std::vector<DtypeHint> hints = {{1024, 800, kF64}};
  std::string note;
  VariableMap m = inf.infer("/x.h5", "/nonexistent/x.h5", data.data(), data.size(), hints, &note);
  EXPECT_EQ(m.source, "mpiio");
  EXPECT_NE(note.find("HDF5"), std::string::npos) << note;
  // Without hints the file is agnostic and says why.
  m = inf.infer("/x.h5", "/nonexistent/x.h5", data.data(), data.size(), {}, &note);
  EXPECT_TRUE(m.source.empty());
  EXPECT_NE(m.detail.find("HDF5"), std::string::npos) << m.detail;
}

}  // namespace
}  // namespace ckptfwd::schema
