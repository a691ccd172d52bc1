// OpenFOAM binary field files (schema/openfoam_field.h), laid out as OpenFOAM writes them.
// Files written by icoFoam itself are checked by tests/integration/test_openfoam_fields.sh.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "schema/infer.h"
#include "schema/openfoam_field.h"
#include "store/container/variable_map.h"

namespace ckptfwd::schema {
namespace {

class FoamFile {
 public:
  explicit FoamFile(const std::string& cls, const std::string& format = "binary",
                    const std::string& arch = "LSB;label=32;scalar=64") {
    text(
        "/*--------------------------------*- C++ -*----------------------------------*\\\n"
        "| =========  | OpenFOAM: The Open Source CFD Toolbox  { not a brace }  |\n"
        "\\*---------------------------------------------------------------------------*/\n"
        "FoamFile\n{\n    version     2.0;\n    format      " +
        format + ";\n    class       " + cls + ";\n    arch        \"" + arch +
        "\";\n    location    \"0.05\";\n    object      U;\n}\n"
        "// * * * * * * * * * * * * * * * * //\n\ndimensions      [0 1 -1 0 0 0 0];\n\n");
  }
  void text(const std::string& s) { bytes.insert(bytes.end(), s.begin(), s.end()); }
  // "nonuniform List<T> N\n(" + N*comps doubles + ")"; returns the offset of the values.
  size_t list(const std::string& t, size_t n, size_t comps, size_t elem = 8) {
    text("nonuniform List<" + t + "> \n" + std::to_string(n) + "\n(");
    size_t at = bytes.size();
    for (size_t i = 0; i < n * comps; ++i) {
      double v = 0.25 * static_cast<double>(i);
      uint8_t b[8];
      memcpy(b, &v, 8);
      bytes.insert(bytes.end(), b, b + elem);
    }
    text(")");
    return at;
  }
  std::vector<uint8_t> bytes;
};

VariableMap infer_ok(const std::vector<uint8_t>& f) {
  VariableMap m;
  std::string why;
  EXPECT_TRUE(is_openfoam_binary(f.data(), f.size()));
  EXPECT_TRUE(infer_openfoam_field(f.data(), f.size(), m, &why)) << why;
  EXPECT_EQ(check_variable_map(m, f.size()), "");
  return m;
}

TEST(OpenFoamField, InternalAndBoundaryListsAreVariablesByDictionaryPath) {
  FoamFile f("volVectorField");
  f.text("internalField   ");
  size_t internal = f.list("vector", 900, 3);
  f.text(
      ";\n\nboundaryField\n{\n    movingWall\n    {\n        type fixedValue;\n"
      "        value uniform (1 0 0);\n    }\n    procBoundary1to0\n    {\n"
      "        type processor;\n        value ");
  size_t proc = f.list("vector", 30, 3);
  f.text(";\n    }\n    empty { type empty; value nonuniform List<vector> 0(); }\n}\n");
  VariableMap m = infer_ok(f.bytes);
  EXPECT_EQ(m.source, "openfoam");
  ASSERT_EQ(m.vars.size(), 2u);
  EXPECT_EQ(m.vars[0].key, "U/internalField_F64LE_Array2D");
  EXPECT_EQ(m.vars[0].shape, (std::vector<uint64_t>{900, 3}));
  EXPECT_EQ(m.vars[0].extents[0].file_off, internal);
  EXPECT_EQ(m.vars[1].name, "U/boundaryField/procBoundary1to0/value");
  EXPECT_EQ(m.vars[1].extents[0].file_off, proc);
  EXPECT_EQ(mapped_bytes(m), (900 + 30) * 3 * 8u);
}

TEST(OpenFoamField, ArchGivesTheDtypes) {
  FoamFile f("volScalarField", "binary", "MSB;label=64;scalar=32");
  f.text("internalField ");
  f.list("scalar", 50, 1, 4);
  f.text(";\nlabels ");
  f.list("label", 10, 1, 8);
  f.text(";\nsigma ");
  f.list("symmTensor", 7, 6, 4);
  f.text(";\n");
  VariableMap m = infer_ok(f.bytes);
  ASSERT_EQ(m.vars.size(), 3u);
  EXPECT_EQ(m.vars[0].dtype, "F32BE");
  EXPECT_EQ(m.vars[1].dtype, "I64BE");
  EXPECT_EQ(m.vars[2].shape, (std::vector<uint64_t>{7, 6}));
}

TEST(OpenFoamField, AsciiTruncatedAndUnclosedFilesAreNotMapped) {
  FoamFile ascii("volScalarField", "ascii");
  ascii.text("internalField nonuniform List<scalar> 3(1 2 3);\n");
  EXPECT_FALSE(is_openfoam_binary(ascii.bytes.data(), ascii.bytes.size()));

  FoamFile f("volScalarField");
  f.text("internalField ");
  f.list("scalar", 100, 1);
  f.text(";\n");
  std::vector<uint8_t> cut(f.bytes.begin(), f.bytes.end() - 40);
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_openfoam_field(cut.data(), cut.size(), m, &why));
  EXPECT_NE(why.find("past the end"), std::string::npos) << why;

  std::vector<uint8_t> unclosed = f.bytes;
  unclosed[unclosed.size() - 3] = 'x';  // the ) after the values
  EXPECT_FALSE(infer_openfoam_field(unclosed.data(), unclosed.size(), m, &why));
  EXPECT_NE(why.find("not closed"), std::string::npos) << why;
  EXPECT_TRUE(m.empty());

  FoamFile bad_arch("volScalarField", "binary", "LSB;label=32;scalar=128");
  bad_arch.text("internalField ");
  bad_arch.list("scalar", 4, 2);
  EXPECT_FALSE(infer_openfoam_field(bad_arch.bytes.data(), bad_arch.bytes.size(), m, &why));
}

TEST(OpenFoamField, InferrerUsesItWithoutASchema) {
  FoamFile f("volVectorField");
  f.text("internalField ");
  f.list("vector", 64, 3);
  f.text(";\n");
  Inferrer inf;
  std::string note;
  VariableMap m = inf.infer("/case/processor3/0.5/U", "/case/processor3/0.5/U", f.bytes.data(),
                            f.bytes.size(), {}, &note);
  EXPECT_EQ(m.source, "openfoam") << m.detail;
}

}  // namespace
}  // namespace ckptfwd::schema
