// The schema language (docs/schemas.md): parse errors with
// their positions, every type in both byte orders, size expressions, repeat groups, the
// [*] tail, and each reason a file does not fit, including hostile counts.
#include "schema/schema_lang.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace ckptfwd::schema {
namespace {

// Little or big endian bytes, built field by field.
struct Bytes {
  bool big = false;
  std::vector<uint8_t> b;
  Bytes& put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b.push_back(uint8_t(v >> (8 * (big ? n - 1 - i : i))));
    return *this;
  }
  Bytes& i8(int64_t v) { return put(uint64_t(v), 1); }
  Bytes& i16(int64_t v) { return put(uint64_t(v), 2); }
  Bytes& i32(int64_t v) { return put(uint64_t(v), 4); }
  Bytes& i64(int64_t v) { return put(uint64_t(v), 8); }
  Bytes& f32(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return put(u, 4);
  }
  Bytes& f64(double f) {
    uint64_t u;
    memcpy(&u, &f, 8);
    return put(u, 8);
  }
  Bytes& raw(const std::string& s) {
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& zeros(size_t n) {
    b.insert(b.end(), n, 0);
    return *this;
  }
};

std::string parse_error(const std::string& text) {
  SchemaSet s;
  std::string err;
  EXPECT_FALSE(s.add_text(text, "t.schema", &err)) << text;
  return err;
}

// Parses text (must succeed) and applies its first rule to data.
struct Applied {
  bool ok = false;
  std::string why;
  VariableMap m;
  const Variable* var(const std::string& name) const {
    for (const Variable& v : m.vars)
      if (v.name == name) return &v;
    return nullptr;
  }
};
Applied apply_first(const std::string& text, const std::vector<uint8_t>& data, int64_t rank = -1) {
  SchemaSet s;
  std::string err;
  Applied a;
  EXPECT_TRUE(s.add_text(text, "t.schema", &err)) << err;
  if (s.rule_count() == 0) return a;
  a.ok = apply_schema_rule(*s.rule(0), data.data(), data.size(), a.m, &a.why, 0, rank);
  if (a.ok) {
    EXPECT_EQ(check_variable_map(a.m, data.size()), "");
  }
  return a;
}

using Dims = std::vector<uint64_t>;

TEST(SchemaParse, ValidSchemaWithEverything) {
  SchemaSet s;
  std::string err;
  ASSERT_TRUE(
      s.add_text("# header comment\n"
                 "rename s/_r[0-9]+$//\n"
                 "file \"*/a_*.bin\" big_endian   # trailing comment\n"
                 "  char magic[8]; int32 n\n"
                 "  repeat n { int16 k; float32 v[k][2] }\n"
                 "  bytes rest[*]\n"
                 "file \"*/b.bin\"\n"
                 "  uint8 x\n",
                 "t.schema", &err))
      << err;
  EXPECT_EQ(s.rule_count(), 2u);
  ASSERT_EQ(s.renames().size(), 1u);
  EXPECT_EQ(s.renames()[0], "s/_r[0-9]+$//");
  EXPECT_EQ(describe_rule(*s.rule(0)), "'*/a_*.bin' (t.schema:3)");
  EXPECT_EQ(format_rule(*s.rule(0)),
            "file \"*/a_*.bin\" big_endian\n  char magic[8]\n  int32 n\n  repeat n {\n"
            "    int16 k\n    float32 v[k][2]\n  }\n  bytes rest[*]\n");
}

TEST(SchemaParse, GlobMatchesAbsolutePathWithoutPathname) {
  SchemaSet s;
  std::string err;
  ASSERT_TRUE(s.add_text("file \"/run/*.bin\"\nfile \"*\"\n", "t.schema", &err)) << err;
  ASSERT_NE(s.match("/run/deep/dir/x.bin"), nullptr);  // '*' crosses '/'
  EXPECT_EQ(s.match("/run/deep/dir/x.bin"), s.rule(0));
  EXPECT_EQ(s.match("/other/x.dat"), s.rule(1));  // first match in order
  SchemaSet none;
  ASSERT_TRUE(none.add_text("file \"*.h5\"\n", "t.schema", &err));
  EXPECT_EQ(none.match("/x.bin"), nullptr);
}

TEST(SchemaParse, ErrorsHaveExactPositions) {
  EXPECT_EQ(parse_error("file \"*\"\n  int33 x\n"), "t.schema:2:3: unknown type 'int33'");
  EXPECT_EQ(parse_error("int32 x\n"), "t.schema:1:1: expected 'file' or 'rename', found 'int32'");
  EXPECT_EQ(parse_error("file *.bin\n"),
            "t.schema:1:6: expected a glob in double quotes, found '*'");
  EXPECT_EQ(parse_error("file \"*\" middle_endian\n"),
            "t.schema:1:10: expected little_endian, big_endian or end of line, found "
            "'middle_endian'");
  EXPECT_EQ(parse_error("file \"*\"\n int32\n"),
            "t.schema:2:7: expected a field name, found end of line");
  EXPECT_EQ(parse_error("file \"*\"\n int32 a b\n"),
            "t.schema:2:10: expected ';' or end of line, found 'b'");
  EXPECT_EQ(parse_error("file \"*\"\n int32 a[3\n"),
            "t.schema:2:11: expected ']', found end of line");
  EXPECT_EQ(parse_error("file \"*\"\n int32 a[]\n"),
            "t.schema:2:10: expected a number, a field name or '(', found ']'");
  EXPECT_EQ(parse_error("file \"*\"\n int32 a[(2+3]\n"), "t.schema:2:14: expected ')', found ']'");
  EXPECT_EQ(parse_error("file \"*\"\n int32 a[q]\n"),
            "t.schema:2:10: unknown field 'q' in expression");
  EXPECT_EQ(parse_error("file \"*\"\n int32 a[n]\n int32 n\n"),
            "t.schema:2:10: field 'n' is used before its definition (line 3)");
  EXPECT_EQ(parse_error("file \"*\"\n int32 n[n]\n"),
            "t.schema:2:10: field 'n' is used before its definition");
  EXPECT_EQ(parse_error("file \"*\"\n char c\n int8 a[c]\n"),
            "t.schema:3:9: field 'c' is not a numeric scalar and cannot be used in a size");
  EXPECT_EQ(parse_error("file \"*\"\n int32 n[2]\n int8 a[n]\n"),
            "t.schema:3:9: field 'n' is not a numeric scalar and cannot be used in a size");
  EXPECT_EQ(parse_error("file \"*\"\n int32 h[until \"x\"]\n"),
            "t.schema:2:10: [until ...] needs a type of one byte (char, int8, uint8, bytes), not "
            "int32");
  EXPECT_EQ(parse_error("file \"*\"\n char h[until \"x\"][2]\n"),
            "t.schema:2:19: [until ...] must be the only dimension");
  EXPECT_EQ(parse_error("file \"*\"\n char h[2][until \"x\"]\n"),
            "t.schema:2:12: [until ...] must be the only dimension");
  EXPECT_EQ(parse_error("file \"*\"\n char h[until \"\"]\n"),
            "t.schema:2:15: the marker of [until ...] is empty");
  EXPECT_EQ(parse_error("file \"*\"\n char h[until \"a\\q\"]\n"),
            "t.schema:2:15: bad marker: unknown escape '\\q'");
  EXPECT_EQ(parse_error("file \"*\"\n char h[until \"\\x4\"]\n"),
            "t.schema:2:15: bad marker: \\x needs two hex digits");
  EXPECT_EQ(parse_error("file \"*\"\n repeat * { int8 k }\n int8 x\n"),
            "t.schema:3:2: expected the end of the rule after the repeat * at line 2, found "
            "'int8'");
  EXPECT_EQ(parse_error("file \"*\"\n repeat 2 { repeat * { int8 k } }\n"),
            "t.schema:2:20: repeat * is not allowed inside a repeat group");
  EXPECT_EQ(parse_error("file \"*\"\n repeat * int8 k\n"),
            "t.schema:2:9: expected a number, a field name or '(', found '*'");
  EXPECT_EQ(parse_error("file \"*\"\n int32 n; int8 n\n"),
            "t.schema:2:16: duplicate field name 'n' (first at line 2)");
  EXPECT_EQ(parse_error("file \"*\"\n bytes r[*]\n int8 x\n"),
            "t.schema:3:2: expected the end of the rule after the [*] field 'r', found 'int8'");
  EXPECT_EQ(parse_error("file \"*\"\n int8 r[2][*]\n"),
            "t.schema:2:12: [*] must be the first dimension");
  EXPECT_EQ(parse_error("file \"*\"\n repeat 2 { bytes r[*] }\n"),
            "t.schema:2:21: [*] is not allowed inside a repeat group");
  EXPECT_EQ(parse_error("file \"*\"\n repeat 2 { int8 k }\n int8 a[k]\n"),
            "t.schema:3:9: field 'k' belongs to a finished repeat group (line 2) and has no "
            "single value here");
  EXPECT_EQ(parse_error("file \"*\"\n repeat 2 { int8 k\n"),
            "t.schema:3:1: expected '}', found end of file");
  EXPECT_EQ(parse_error("file \"*\"\n repeat 2 int8 k\n"),
            "t.schema:2:11: expected '{', found 'int8'");
  EXPECT_EQ(parse_error("file \"*\"\n int8 a[99999999999999999999]\n"),
            "t.schema:2:9: number 99999999999999999999 is too large");
  EXPECT_EQ(parse_error("file \"*\"\n int8 a[3x]\n"),
            "t.schema:2:9: expected a number, a field name or '(', found '3x'");
  EXPECT_EQ(parse_error("file \"*\n"),
            "t.schema:1:6: expected a glob in double quotes, found '\"*'");
  EXPECT_EQ(parse_error("file \"*\"\n int8 a[2] $\n"),
            "t.schema:2:12: expected ';' or end of line, found '$'");
  EXPECT_EQ(parse_error("rename\n"), "t.schema:1:7: expected s/REGEX/REPLACEMENT/, found ''");
  EXPECT_EQ(parse_error("file \"*\"\n }\n"), "t.schema:2:2: expected a field type, found '}'");
  EXPECT_NE(parse_error("rename s/(/x/\n").find("t.schema:1:8: bad rename rule"),
            std::string::npos);
}

TEST(SchemaParse, FailedTextAddsNothing) {
  SchemaSet s;
  std::string err;
  ASSERT_TRUE(s.add_text("file \"*/a\"\n int8 x\n", "a.schema", &err));
  EXPECT_FALSE(s.add_text("rename s/a/b/\nfile \"*/b\"\n int9 x\n", "b.schema", &err));
  EXPECT_EQ(s.rule_count(), 1u);
  EXPECT_TRUE(s.renames().empty());
  EXPECT_FALSE(s.load_files("/nonexistent/x.schema", &err));
  EXPECT_NE(err.find("/nonexistent/x.schema"), std::string::npos);
  EXPECT_TRUE(s.load_files("", &err));
}

TEST(SchemaParse, HostileNestingIsAnError) {
  std::string deep =
      "file \"*\"\n int8 a[" + std::string(5000, '(') + "1" + std::string(5000, ')') + "]\n";
  EXPECT_NE(parse_error(deep).find("nested too deeply"), std::string::npos);
  std::string neg = "file \"*\"\n int8 a[" + std::string(5000, '-') + "1]\n";
  EXPECT_NE(parse_error(neg).find("nested too deeply"), std::string::npos);
  std::string reps = "file \"*\"\n";
  for (int i = 0; i < 100; ++i) reps += "repeat 1 {\n";
  EXPECT_NE(parse_error(reps).find("repeat groups nested too deeply"), std::string::npos);
}

TEST(SchemaApply, EveryTypeLittleAndBigEndian) {
  const std::string fields =
      "char c[2]; int8 a; uint8 b; int16 c16; uint16 d16; int32 e32; uint32 f32u\n"
      "int64 g64; uint64 h64; float32 fl; float64 db; bytes raw[3]\n";
  for (bool big : {false, true}) {
    Bytes d{big, {}};
    d.raw("hi")
        .i8(-1)
        .i8(200)
        .i16(-2)
        .i16(60000)
        .i32(-3)
        .i32(4000000000)
        .i64(-4)
        .i64(5)
        .f32(1.5f)
        .f64(2.5)
        .raw("xyz");
    Applied a = apply_first(
        std::string("file \"*\" ") + (big ? "big_endian" : "little_endian") + "\n" + fields, d.b);
    ASSERT_TRUE(a.ok) << a.why;
    const char* s = big ? "BE" : "LE";
    struct Want {
      const char* name;
      std::string dtype;
      uint32_t size;
    } want[] = {{"c", "CHAR", 1},
                {"a", "I8", 1},
                {"b", "U8", 1},
                {"c16", std::string("I16") + s, 2},
                {"d16", std::string("U16") + s, 2},
                {"e32", std::string("I32") + s, 4},
                {"f32u", std::string("U32") + s, 4},
                {"g64", std::string("I64") + s, 8},
                {"h64", std::string("U64") + s, 8},
                {"fl", std::string("F32") + s, 4},
                {"db", std::string("F64") + s, 8},
                {"raw", "bytes", 1}};
    ASSERT_EQ(a.m.vars.size(), 12u);
    uint64_t off = 0;
    for (size_t i = 0; i < 12; ++i) {
      const Variable& v = a.m.vars[i];
      EXPECT_EQ(v.name, want[i].name);
      EXPECT_EQ(v.dtype, want[i].dtype);
      EXPECT_EQ(v.elem_size, want[i].size);
      bool array = v.name == "c" || v.name == "raw";
      EXPECT_EQ(v.key, var_key(v.name, v.dtype, array ? 1 : 0));
      ASSERT_EQ(v.extents.size(), 1u);
      EXPECT_EQ(v.extents[0].file_off, off);
      off += v.extents[0].len;
    }
    EXPECT_EQ(off, d.b.size());
    EXPECT_EQ(a.m.source, "schema");
    EXPECT_EQ(a.m.detail, "'*' (t.schema:1)");
  }
}

TEST(SchemaApply, SizesReadWithTheRuleByteOrderAndSign) {
  for (bool big : {false, true}) {
    Bytes d{big, {}};
    d.i16(3).i8(-2).zeros(3 * 4).zeros(0);
    Applied a = apply_first(std::string("file \"*\" ") + (big ? "big_endian" : "") +
                                "\nint16 n; int8 m; float32 v[n]; int8 w[m + 2]\n",
                            d.b);
    ASSERT_TRUE(a.ok) << a.why;
    EXPECT_EQ(a.var("v")->shape, Dims{3});
    EXPECT_EQ(a.var("w")->shape, Dims{0});
    EXPECT_TRUE(a.var("w")->extents.empty());  // an empty array has no extent
  }
  // A negative int8 size is negative, not 254.
  Bytes d;
  d.i8(-2);
  Applied a = apply_first("file \"*\"\nint8 m; int8 w[m]\n", d.b);
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.why, "field 'w' at offset 1: dimension 1 is negative (-2)");
}

TEST(SchemaApply, ExpressionsAndMultipleDimensions) {
  Bytes d;
  d.i32(4).i32(3);
  // (nx*ny - 2) / 5 + nx % 3 = (12-2)/5 + 1 = 3;  -(-nx) = 4;  grid[nx][ny] = 12
  d.zeros(3 + 4 + 12 * 8);
  Applied a = apply_first(
      "file \"*\"\n int32 nx; int32 ny\n int8 e[(nx*ny - 2) / 5 + nx % 3]\n"
      " int8 f[-(-nx)]\n float64 grid[nx][ny]\n",
      d.b);
  ASSERT_TRUE(a.ok) << a.why;
  EXPECT_EQ(a.var("e")->shape, Dims{3});
  EXPECT_EQ(a.var("f")->shape, Dims{4});
  const Variable* g = a.var("grid");
  EXPECT_EQ(g->shape, (Dims{4, 3}));
  EXPECT_EQ(g->key, "grid_F64LE_Array2D");
  ASSERT_EQ(g->extents.size(), 1u);
  EXPECT_EQ(g->extents[0].file_off, 15u);
  EXPECT_EQ(g->extents[0].len, 96u);
  EXPECT_EQ(g->extents[0].start, (Dims{0, 0}));
  EXPECT_EQ(g->extents[0].shape, (Dims{4, 3}));
  // 1 - 2 - 3 is (1 - 2) - 3, and 12 / 2 / 3 is (12 / 2) / 3.
  Bytes e;
  e.zeros(2);
  Applied b = apply_first("file \"*\"\n int8 a[10 - 2 - 3 - 4]; int8 b[12 / 2 / 3 - 1]\n", e.b);
  ASSERT_TRUE(b.ok) << b.why;
  EXPECT_EQ(b.var("a")->shape, Dims{1});
  EXPECT_EQ(b.var("b")->shape, Dims{1});
}

TEST(SchemaPlacement, AtInGivesTheBlockOfTheGlobalArray) {
  Bytes d;
  d.i32(2).i32(4).i32(3).i32(5);  // rank, nranks, nz, nx
  d.zeros(3 * 5 * 8 + 4 * 2);
  const std::string rule =
      "file \"*\"\n int32 rank; int32 nranks; int32 nz; int32 nx\n"
      " float64 t[nz][nx] at [rank*nz][0] in [nranks*nz][nx]\n"
      " float32 w[2] at [rank * 2] in [nranks*2]\n";
  Applied a = apply_first(rule, d.b);
  ASSERT_TRUE(a.ok) << a.why;
  const Variable* t = a.var("t");
  EXPECT_EQ(t->shape, (Dims{3, 5}));
  EXPECT_EQ(t->global_start, (Dims{6, 0}));
  EXPECT_EQ(t->global_shape, (Dims{12, 5}));
  EXPECT_EQ(a.var("w")->global_start, Dims{4});
  EXPECT_EQ(a.var("rank")->global_shape, Dims{});  // no placement: none
  SchemaSet s;
  std::string err;
  ASSERT_TRUE(s.add_text(rule, "t.schema", &err)) << err;
  EXPECT_EQ(format_rule(*s.rule(0)),
            "file \"*\" little_endian\n  int32 rank\n  int32 nranks\n  int32 nz\n  int32 nx\n"
            "  float64 t[nz][nx] at [rank*nz][0] in [nranks*nz][nx]\n"
            "  float32 w[2] at [rank*2] in [nranks*2]\n");
}

TEST(SchemaPlacement, RankIsTheWritersWhereNoFieldHasThatName) {
  Bytes d;
  d.zeros(4 * 8);
  const std::string rule = "file \"*\"\n float64 x[4] at [rank*4] in [16]\n";
  Applied a = apply_first(rule, d.b, 2);
  ASSERT_TRUE(a.ok) << a.why;
  EXPECT_EQ(a.var("x")->global_start, Dims{8});
  EXPECT_EQ(a.var("x")->global_shape, Dims{16});
  // Rank not known, or a block outside the global array: the split stands, the placement
  // is left out and named.
  Applied b = apply_first(rule, d.b);
  ASSERT_TRUE(b.ok) << b.why;
  EXPECT_TRUE(b.var("x")->global_shape.empty());
  EXPECT_NE(b.m.detail.find("placement of 'x' not kept"), std::string::npos) << b.m.detail;
  EXPECT_NE(b.m.detail.find("rank is not known"), std::string::npos) << b.m.detail;
  Applied c = apply_first(rule, d.b, 3);  // 12 + 4 > 16 fits; 4 does not
  ASSERT_TRUE(c.ok) << c.why;
  EXPECT_EQ(c.var("x")->global_start, Dims{12});
  Applied e = apply_first(rule, d.b, 4);
  ASSERT_TRUE(e.ok) << e.why;
  EXPECT_TRUE(e.var("x")->global_shape.empty());
  EXPECT_NE(e.m.detail.find("exceed the global size 16"), std::string::npos) << e.m.detail;
  Applied f = apply_first("file \"*\"\n float64 x[4] at [0-1] in [4]\n", d.b);
  ASSERT_TRUE(f.ok) << f.why;
  EXPECT_NE(f.m.detail.find("negative"), std::string::npos) << f.m.detail;
  Applied g = apply_first("file \"*\"\n float64 x[4] at [4/0] in [4]\n", d.b);
  ASSERT_TRUE(g.ok) << g.why;
  EXPECT_NE(g.m.detail.find("division by zero"), std::string::npos) << g.m.detail;
}

TEST(SchemaPlacement, ParseErrors) {
  EXPECT_EQ(parse_error("file \"*\"\n float64 x[4] at [0] in [4][2]\n"),
            "t.schema:2:31: 'in' needs one [...] per dimension of 'x' (1), found 2");
  EXPECT_EQ(parse_error("file \"*\"\n float64 x[4] at [0]\n"),
            "t.schema:2:21: expected 'in' and the global shape after the placement, found end "
            "of line");
  EXPECT_EQ(parse_error("file \"*\"\n float64 x at [0] in [4]\n"),
            "t.schema:2:12: a placement (at ... in ...) needs an array field");
  EXPECT_EQ(parse_error("file \"*\"\n repeat 2 { float64 x[4] at [0] in [4] }\n"),
            "t.schema:2:26: a placement (at ... in ...) is not allowed inside a repeat group");
  EXPECT_EQ(parse_error("file \"*\"\n float64 x[4] at [y] in [4]; int32 y\n"),
            "t.schema:2:19: field 'y' is used before its definition (line 2)");
  EXPECT_EQ(parse_error("file \"*\"\n float64 x[rank]\n"),
            "t.schema:2:12: unknown field 'rank' in expression");
}

TEST(SchemaApply, RepeatGroups) {
  Bytes d;
  d.i32(3);
  d.i32(2).f32(1).f32(2);
  d.i32(0);
  d.i32(1).f32(3);
  Applied a = apply_first("file \"*\"\n int32 nb\n repeat nb { int32 n; float32 mass[n] }\n", d.b);
  ASSERT_TRUE(a.ok) << a.why;
  const Variable* n = a.var("n");
  EXPECT_EQ(n->key, "n_I32LE_Array1D");
  EXPECT_EQ(n->shape, Dims{3});
  ASSERT_EQ(n->extents.size(), 3u);
  EXPECT_EQ(n->extents[0].file_off, 4u);
  EXPECT_EQ(n->extents[1].file_off, 16u);
  EXPECT_EQ(n->extents[2].file_off, 20u);
  EXPECT_EQ(n->extents[2].start, Dims{2});
  EXPECT_EQ(n->extents[2].shape, Dims{1});
  const Variable* m = a.var("mass");
  EXPECT_EQ(m->shape, Dims{3});
  ASSERT_EQ(m->extents.size(), 2u);  // the empty iteration has no extent
  EXPECT_EQ(m->extents[0].file_off, 8u);
  EXPECT_EQ(m->extents[0].shape, Dims{2});
  EXPECT_EQ(m->extents[1].file_off, 24u);
  EXPECT_EQ(m->extents[1].start, Dims{2});
  EXPECT_EQ(m->extents[1].shape, Dims{1});
}

// Records of several lengths, each length held in a float64 (as LAMMPS keeps an atom's
// record length in its restart file), until the file ends: each field is one variable
// (struct of arrays), and the split covers every byte.
TEST(SchemaApply, RepeatUntilTheEndWithFloatLengths) {
  Bytes d;
  for (int r = 0; r < 3; ++r) {
    const int extra = r % 2 ? 2 : 0;  // every other record has two more values
    d.f64(4 + extra).f64(1.5 * r).f64(2.5 * r).f64(3.5 * r);
    for (int k = 0; k < extra; ++k) d.f64(10 + k);
  }
  const std::string text =
      "file \"*\"\n repeat * { float64 len; float64 x; float64 y; float64 z; "
      "float64 rest[len - 4] }\n";
  Applied a = apply_first(text, d.b);
  ASSERT_TRUE(a.ok) << a.why;
  EXPECT_EQ(a.var("len")->shape, Dims{3});
  EXPECT_EQ(a.var("x")->shape, Dims{3});
  ASSERT_EQ(a.var("x")->extents.size(), 3u);
  EXPECT_EQ(a.var("x")->extents[1].file_off, 32u + 8u);
  EXPECT_EQ(a.var("x")->extents[2].file_off, 32u + 48u + 8u);
  EXPECT_EQ(a.var("rest")->shape, Dims{2});
  ASSERT_EQ(a.var("rest")->extents.size(), 1u);
  EXPECT_EQ(a.var("rest")->extents[0].file_off, 32u + 32u);
  // A bound on the pieces (the forwarder's, fine_split_limit): one piece more does not fit.
  {
    SchemaSet set;
    std::string err;
    ASSERT_TRUE(set.add_text(text, "t.schema", &err)) << err;
    VariableMap m;
    std::string why;
    // 3 records: len, x, y, z each, and one list of bonds.
    EXPECT_TRUE(apply_schema_rule(*set.rule(0), d.b.data(), d.b.size(), m, &why, 13)) << why;
    EXPECT_FALSE(apply_schema_rule(*set.rule(0), d.b.data(), d.b.size(), m, &why, 12));
    EXPECT_NE(why.find("the split has more than 12 pieces"), std::string::npos) << why;
    EXPECT_EQ(fine_split_limit(*set.rule(0), 1000), 64u * 5 + 1000 / 256);
  }
  // An empty file has no records; the rule still fits.
  Applied none = apply_first(text, {});
  ASSERT_TRUE(none.ok) << none.why;
  EXPECT_EQ(none.var("x")->shape, Dims{0});
  // The rule text the CLI prints parses back to the same rule.
  SchemaSet s;
  std::string err;
  ASSERT_TRUE(s.add_text(text, "t.schema", &err)) << err;
  const std::string formatted = format_rule(*s.rule(0));
  EXPECT_NE(formatted.find("repeat * {"), std::string::npos) << formatted;
  SchemaSet again;
  ASSERT_TRUE(again.add_text(formatted, "f.schema", &err)) << err << formatted;
  EXPECT_EQ(format_rule(*again.rule(0)), formatted);
}

// [until "MARKER"]: a text header of a length the file does not state (a writer's ASCII
// preamble before its arrays, lines of text), up to and including a marker; the marker's C
// escapes; a file without the marker does not fit, with the reason; the rule prints back.
TEST(SchemaApply, UntilAMarkerTakesTextOfAnyLength) {
  const std::string text =
      "file \"*\"\n char header[until \"END\\n\"]\n int32 n\n"
      " repeat 2 { char line[until \"\\n\"] }\n float64 x[n]\n";
  for (const std::string& preamble :
       {std::string("END\n"), std::string("# written by run 7\nsteps 40\nEND\n")}) {
    Bytes d;
    d.raw(preamble).i32(3).raw("temperature K\n").raw("\n").f64(1).f64(2).f64(3);
    Applied a = apply_first(text, d.b);
    ASSERT_TRUE(a.ok) << a.why;
    ASSERT_EQ(a.var("header")->extents.size(), 1u);
    EXPECT_EQ(a.var("header")->shape, Dims{preamble.size()});
    EXPECT_EQ(a.var("n")->extents[0].file_off, preamble.size());
    EXPECT_EQ(a.var("line")->shape, Dims{15});  // "temperature K\n" and "\n"
    ASSERT_EQ(a.var("line")->extents.size(), 2u);
    EXPECT_EQ(a.var("line")->extents[1].len, 1u);
    EXPECT_EQ(a.var("x")->shape, Dims{3});
    EXPECT_EQ(a.var("x")->extents[0].file_off, preamble.size() + 4 + 15);
  }
  Bytes none;
  none.raw("no marker here").i32(0);
  Applied a = apply_first(text, none.b);
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.why, "field 'header' at offset 0: its marker \"END\\n\" is not in the 18 bytes left");
  // Escapes: \x00 and \t; a field named `until` still sizes an array.
  Bytes bin;
  bin.raw(std::string("ab\t\0", 4)).i8(2).i8(5).i8(6);
  Applied e = apply_first(
      "file \"*\"\n bytes pre[until \"\\t\\x00\"]\n int8 until\n int8 v[until]\n", bin.b);
  ASSERT_TRUE(e.ok) << e.why;
  EXPECT_EQ(e.var("pre")->shape, Dims{4});
  EXPECT_EQ(e.var("v")->shape, Dims{2});
  SchemaSet s;
  std::string err;
  ASSERT_TRUE(s.add_text(text, "t.schema", &err)) << err;
  const std::string formatted = format_rule(*s.rule(0));
  EXPECT_NE(formatted.find("char header[until \"END\\n\"]"), std::string::npos) << formatted;
  SchemaSet again;
  ASSERT_TRUE(again.add_text(formatted, "f.schema", &err)) << err << formatted;
  EXPECT_EQ(format_rule(*again.rule(0)), formatted);
}

TEST(SchemaApply, NestedRepeatSeesOuterFields) {
  Bytes d;
  d.i8(2).i8(2);                        // scale, outer count
  d.i8(1).i16(7).i16(8);                // iteration 0: k=1, inner repeat 1 x {int16 v[scale]}
  d.i8(2).i16(1).i16(2).i16(3).i16(4);  // iteration 1: k=2
  Applied a = apply_first(
      "file \"*\"\n int8 scale; int8 nout\n"
      " repeat nout { int8 k; repeat k { int16 v[scale] } }\n",
      d.b);
  ASSERT_TRUE(a.ok) << a.why;
  EXPECT_EQ(a.var("k")->shape, Dims{2});
  const Variable* v = a.var("v");
  EXPECT_EQ(v->shape, Dims{6});
  ASSERT_EQ(v->extents.size(), 3u);
  EXPECT_EQ(v->extents[0].file_off, 3u);
  EXPECT_EQ(v->extents[1].file_off, 8u);
  EXPECT_EQ(v->extents[2].file_off, 12u);
  EXPECT_EQ(v->extents[2].start, Dims{4});
}

TEST(SchemaApply, RepeatWithVaryingInnerDimension) {
  Bytes d;
  d.i8(1).zeros(1 * 3).i8(2).zeros(2 * 3);
  Applied a = apply_first("file \"*\"\n repeat 2 { int8 r; int8 m[3][r] }\n", d.b);
  ASSERT_TRUE(a.ok) << a.why;
  const Variable* m = a.var("m");
  EXPECT_EQ(m->shape, (Dims{6, 2}));  // rows stacked, columns bounded by the widest
  ASSERT_EQ(m->extents.size(), 2u);
  EXPECT_EQ(m->extents[1].start, (Dims{3, 0}));
  EXPECT_EQ(m->extents[1].shape, (Dims{3, 2}));
}

TEST(SchemaApply, Tail) {
  Bytes d;
  d.i32(1).zeros(10);
  Applied a = apply_first("file \"*\"\n int32 x\n bytes rest[*]\n", d.b);
  ASSERT_TRUE(a.ok) << a.why;
  EXPECT_EQ(a.var("rest")->shape, Dims{10});
  // Whole elements only; the partial one stays residual.
  Applied b = apply_first("file \"*\"\n int32 x\n float64 rest[*]\n", d.b);
  ASSERT_TRUE(b.ok) << b.why;
  EXPECT_EQ(b.var("rest")->shape, Dims{1});
  EXPECT_EQ(residual_ranges(b.m, d.b.size()),
            (std::vector<std::pair<uint64_t, uint64_t>>{{12, 14}}));
  Applied c = apply_first("file \"*\"\n int32 x\n int8 rest[*][5]\n", d.b);
  ASSERT_TRUE(c.ok) << c.why;
  EXPECT_EQ(c.var("rest")->shape, (Dims{2, 5}));
  // Nothing left: an empty tail.
  Bytes e;
  e.i32(1);
  Applied f = apply_first("file \"*\"\n int32 x\n bytes rest[*]\n", e.b);
  ASSERT_TRUE(f.ok) << f.why;
  EXPECT_EQ(f.var("rest")->shape, Dims{0});
  EXPECT_TRUE(f.var("rest")->extents.empty());
  Applied g = apply_first("file \"*\"\n int32 x\n int8 rest[*][0]\n", d.b);
  EXPECT_FALSE(g.ok);
  EXPECT_EQ(g.why,
            "field 'rest' at offset 4: the [*] field has elements of 0 bytes and cannot take the "
            "10 bytes left");
}

TEST(SchemaApply, DoesNotFitReasons) {
  struct Case {
    std::string fields;
    Bytes data;
    std::string why;
  };
  auto B = [] { return Bytes{}; };
  std::vector<Case> cases = {
      {"int32 n; int8 a[n]", B().i32(5).zeros(2),
       "file too short: field 'a' at offset 4 needs 5 bytes, only 2 left"},
      {"int32 n; int8 a[n]", B().i32(1).zeros(3),
       "2 bytes left over at offset 5 after the last field (the rule has no [*] tail)"},
      {"int32 n; int8 a[n - 5]", B().i32(1), "field 'a' at offset 4: dimension 1 is negative (-4)"},
      {"int32 n; int8 a[10 / n]", B().i32(0),
       "field 'a' at offset 4: division by zero in its dimension 1"},
      {"int32 n; int8 a[10 % n]", B().i32(0),
       "field 'a' at offset 4: division by zero in its dimension 1"},
      {"int64 n; int8 a[n * n]", B().i64(int64_t(1) << 40),
       "field 'a' at offset 8: overflow in its dimension 1"},
      {"int64 n; int8 a[n + n]", B().i64(INT64_MAX),
       "field 'a' at offset 8: overflow in its dimension 1"},
      {"int64 n; int8 a[0 - n - 2]", B().i64(INT64_MAX),
       "field 'a' at offset 8: overflow in its dimension 1"},
      {"int64 n; int8 a[n / -1]", B().i64(INT64_MIN),
       "field 'a' at offset 8: overflow in its dimension 1"},
      {"int64 n; int8 a[-n]", B().i64(INT64_MIN),
       "field 'a' at offset 8: overflow in its dimension 1"},
      {"int64 n; float64 a[n]", B().i64(int64_t(1) << 62),
       "field 'a' at offset 8: its size in bytes overflows"},
      {"int64 n; int8 a[n][n][n]", B().i64(int64_t(1) << 30),
       "field 'a' at offset 8: its size in bytes overflows"},
      {"uint64 n; int8 a[n]", B().i64(-1),
       "field 'a' at offset 8: the value of 'n' in its dimension 1 is too large for a size"},
      {"int32 n; repeat n { int32 x }", B().i32(-1),
       "repeat (line 2) at offset 4: negative count (-1)"},
      {"int32 n; repeat n { int32 x }", B().i32(3).i32(0),
       "repeat (line 2) at offset 4: count 3 needs at least 4 bytes per iteration, only 4 bytes "
       "left"},
      {"int32 n; repeat n { int8 k; int8 a[k] }", B().i32(2).i8(1).i8(0).i8(5),
       "file too short: field 'a' at offset 7 needs 5 bytes, only 0 left (iteration 1 of the "
       "repeat at line 2)"},
      {"int64 x", B().i32(1), "file too short: field 'x' at offset 0 needs 8 bytes, only 4 left"},
      {"float64 n; int8 a[n]", B().f64(2.5).zeros(2),
       "field 'a' at offset 8: the value of 'n' in its dimension 1 is not a whole number (a "
       "float used as a size must hold one)"},
      {"float32 n; int8 a[n]", B().f32(__builtin_nanf("")),
       "field 'a' at offset 4: the value of 'n' in its dimension 1 is not a finite number up "
       "to 2^53 (a float used as a size must be one)"},
      {"float64 n; int8 a[n]", B().f64(1e300),
       "field 'a' at offset 8: the value of 'n' in its dimension 1 is not a finite number up "
       "to 2^53 (a float used as a size must be one)"},
      {"float64 n; int8 a[n]", B().f64(9007199254740994.0),
       "field 'a' at offset 8: the value of 'n' in its dimension 1 is not a finite number up "
       "to 2^53 (a float used as a size must be one)"},
      {"float64 n; repeat n { int8 x }", B().f64(-3),
       "repeat (line 2) at offset 8: negative count (-3)"},
      {"repeat * { float64 n; float64 v[n - 1] }", B().f64(3).f64(1).f64(2).f64(3).f64(7),
       "file too short: field 'v' at offset 32 needs 16 bytes, only 8 left (iteration 1 of the "
       "repeat * at line 2)"},
      {"int8 n; repeat * { int8 v[n] }", B().i8(0).i8(5),
       "repeat (line 2) at offset 1: iteration 0 of the repeat * read no bytes (it would "
       "repeat forever)"},
  };
  for (Case& c : cases) {
    Applied a = apply_first("file \"*\"\n" + c.fields + "\n", c.data.b);
    EXPECT_FALSE(a.ok) << c.fields;
    EXPECT_EQ(a.why, c.why) << c.fields;
    EXPECT_TRUE(a.m.vars.empty()) << "no partial split: " << c.fields;
  }
}

TEST(SchemaApply, OutputUntouchedWhenItDoesNotFit) {
  SchemaSet s;
  std::string err, why;
  ASSERT_TRUE(s.add_text("file \"*\"\n int64 x\n", "t.schema", &err));
  VariableMap m;
  m.source = "before";
  uint8_t four[4] = {};
  EXPECT_FALSE(apply_schema_rule(*s.rule(0), four, 4, m, &why));
  EXPECT_EQ(m.source, "before");
}

TEST(SchemaApply, HostileCountsEndQuickly) {
  Bytes d;
  d.i64(INT64_MAX).i32(0);
  // Every iteration takes no bytes: counted at once, not looped.
  Applied a = apply_first("file \"*\"\n int64 n; int32 z\n repeat n { int8 e[z] }\n", d.b);
  ASSERT_TRUE(a.ok) << a.why;
  EXPECT_EQ(a.var("e")->shape, Dims{0});
  Applied b = apply_first(
      "file \"*\"\n int64 n; int32 z\n repeat n { repeat n { repeat n { int8 e[3][z] } } }\n", d.b);
  EXPECT_FALSE(b.ok);  // n*n*n rows of 3 overflow the shape
  EXPECT_NE(b.why.find("overflows"), std::string::npos) << b.why;
  Applied c =
      apply_first("file \"*\"\n int64 n; int32 z\n repeat n { repeat n { int8 e[z] } }\n", d.b);
  ASSERT_TRUE(c.ok) << c.why;
  // Iterations that take bytes are bounded by the bytes left.
  Applied e = apply_first("file \"*\"\n int64 n; int32 z\n repeat n { int8 e[1] }\n", d.b);
  EXPECT_FALSE(e.ok);
  EXPECT_NE(e.why.find("file too short"), std::string::npos) << e.why;
  Applied f = apply_first("file \"*\"\n int64 n; int32 z\n repeat n { int8 x }\n", d.b);
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.why,
            "repeat (line 3) at offset 12: count 9223372036854775807 needs at least 1 bytes per "
            "iteration, only 0 bytes left");
}

TEST(SchemaApply, EmptyRuleAndEmptyFile) {
  Applied a = apply_first("file \"*\"\n", {});
  ASSERT_TRUE(a.ok) << a.why;
  EXPECT_TRUE(a.m.vars.empty());
  Applied b = apply_first("file \"*\"\n repeat 0 { int32 x }\n bytes r[*]\n", {});
  ASSERT_TRUE(b.ok) << b.why;
  EXPECT_EQ(b.var("x")->shape, Dims{0});
  EXPECT_EQ(b.var("x")->key, "x_I32LE_Array1D");
}

}  // namespace
}  // namespace ckptfwd::schema
