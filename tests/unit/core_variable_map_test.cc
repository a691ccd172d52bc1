// Variable maps (store/container/variable_map.h): the checks every map passes before use, the
// residual, the binary encoding (round trip, and hostile bytes rejected without a crash or
// a huge allocation), and the map stored per file in a container (format version 3) with
// its variables' placements (version 6).
#include <gtest/gtest.h>
#include <xxhash.h>

#include <random>

#include "common/json_text.h"
#include "core_test_util.h"
#include "store/container/container.h"
#include "store/container/variable_map.h"

namespace ckptfwd {
namespace {

using test::TempDir;

Variable var(const std::string& name, const std::string& dtype, std::vector<uint64_t> shape,
             std::vector<VarExtent> ext) {
  Variable v;
  v.name = name;
  v.dtype = dtype;
  v.elem_size = dtype_name_size(dtype);
  v.shape = std::move(shape);
  v.key = var_key(name, dtype, v.shape.size());
  v.extents = std::move(ext);
  return v;
}

// A 1000-byte file: a 3-D float array at 100, two 8-row chunks of a 2-D double array,
// and a scalar.
VariableMap sample() {
  VariableMap m;
  m.source = "hdf5";
  m.detail = "test";
  m.vars.push_back(var("/fields/T", "F32LE", {2, 3, 4}, {{100, 96, {0, 0, 0}, {2, 3, 4}, false}}));
  m.vars.push_back(var("/g/P", "F64BE", {16, 2},
                       {{300, 128, {0, 0}, {8, 2}, false}, {500, 40, {8, 0}, {8, 2}, true}}));
  m.vars.push_back(var("step", "I64LE", {}, {{8, 8, {}, {}, false}}));
  return m;
}

TEST(VariableMap, KeysNameDtypeAndClass) {
  EXPECT_EQ(var_key("/fields/Temperature", "F32LE", 3), "fields/Temperature_F32LE_Array3D");
  EXPECT_EQ(var_key("nx", "I32BE", 0), "nx_I32BE_Scalar");
  EXPECT_EQ(dtype_name_size("CMP24"), 24u);
  EXPECT_EQ(dtype_name_size("STR0"), 0u);
  EXPECT_EQ(dtype_name_size("F16LE"), 0u);
}

TEST(VariableMap, SampleIsValidAndResidualIsTheRest) {
  VariableMap m = sample();
  EXPECT_EQ(check_variable_map(m, 1000), "");
  EXPECT_EQ(mapped_bytes(m), 96u + 128 + 40 + 8);
  auto res = residual_ranges(m, 1000);
  std::vector<std::pair<uint64_t, uint64_t>> want = {
      {0, 8}, {16, 100}, {196, 300}, {428, 500}, {540, 1000}};
  EXPECT_EQ(res, want);
}

TEST(VariableMap, ChecksNameTheProblem) {
  struct Case {
    const char* what;
    void (*edit)(VariableMap&);
    const char* want;
  };
  const Case cases[] = {
      {"overlap", [](VariableMap& m) { m.vars[2].extents[0].file_off = 190; }, "overlap"},
      {"beyond", [](VariableMap& m) { m.vars[0].extents[0].file_off = 950; }, "beyond the file"},
      {"wraps", [](VariableMap& m) { m.vars[2].extents[0].file_off = UINT64_MAX - 2; },
       "beyond the file"},
      {"empty", [](VariableMap& m) { m.vars[2].extents[0].len = 0; }, "empty"},
      {"shape/len", [](VariableMap& m) { m.vars[0].extents[0].shape[2] = 3; }, "disagree"},
      {"shape overflow",
       [](VariableMap& m) {
         m.vars[0].extents[0].shape = {1ull << 40, 1ull << 40, 1};
       },
       "more bytes"},
      {"rank", [](VariableMap& m) { m.vars[1].extents[1].start.pop_back(); }, "rank"},
      {"dtype", [](VariableMap& m) { m.vars[0].dtype = "F16LE"; }, "unknown dtype"},
      {"elem size", [](VariableMap& m) { m.vars[0].elem_size = 8; }, "element size"},
      {"no key", [](VariableMap& m) { m.vars[0].key.clear(); }, "no key"},
  };
  for (const Case& c : cases) {
    VariableMap m = sample();
    c.edit(m);
    std::string why = check_variable_map(m, 1000);
    EXPECT_NE(why.find(c.want), std::string::npos) << c.what << ": " << why;
  }
  // A filtered chunk's length is free.
  VariableMap m = sample();
  m.vars[1].extents[1].len = 3;
  EXPECT_EQ(check_variable_map(m, 1000), "");
}

// A map of many short extents (a record array split field by field) is too fine to store
// a file by; a few short ones, or many long ones, are not.
TEST(VariableMap, ManyShortExtentsAreTooFine) {
  EXPECT_EQ(variable_map_too_fine(sample()), "") << "3 variables, 4 extents";
  auto records = [](uint64_t n, uint64_t len) {
    VariableMap m;
    Variable x = var("x", "F64LE", {n * len / 8}, {});
    for (uint64_t i = 0; i < n; ++i)
      x.extents.push_back({i * 2 * len, len, {i * len / 8}, {len / 8}, false});
    m.vars.push_back(std::move(x));
    return m;
  };
  EXPECT_EQ(variable_map_too_fine(records(kFineMapExtents, 8)), "") << "few extents";
  EXPECT_EQ(variable_map_too_fine(records(5000, kMinMeanExtent)), "") << "long extents";
  const std::string why = variable_map_too_fine(records(kFineMapExtents + 1, 8));
  EXPECT_EQ(why, std::to_string(kFineMapExtents + 1) +
                     " extents of 8 bytes on average (at least 256 wanted): too fine to store "
                     "the file by variable");
  // Variable by variable: the short-extent one goes (its bytes residual), the others stay.
  VariableMap m = sample();
  VariableMap fine = records(100, 16);
  fine.vars[0].name = "x";
  fine.vars[0].key = var_key("x", "F64LE", 1);
  for (VarExtent& e : fine.vars[0].extents) e.file_off += 2000;
  m.vars.push_back(fine.vars[0]);
  EXPECT_EQ(drop_too_fine_variables(m),
            "1 variable too fine to store by variable (x: 100 extents of 16 bytes on average; at "
            "least 256 bytes per extent wanted)");
  ASSERT_EQ(m.vars.size(), 3u);
  EXPECT_EQ(m.vars[0].name, "/fields/T");
  EXPECT_EQ(m.vars[2].name, "step");
  EXPECT_EQ(drop_too_fine_variables(m), "") << "nothing left to drop";
  // Both as the forwarder applies them: a map keeps its coarse variables; one left with
  // none, or too fine as a whole, is not used.
  bool use = false;
  VariableMap mixed = sample();
  mixed.vars.push_back(fine.vars[0]);
  EXPECT_NE(keep_coarse_variables(mixed, &use), "");
  EXPECT_TRUE(use);
  EXPECT_EQ(mixed.vars.size(), 3u);
  VariableMap only_fine = records(100, 16);
  EXPECT_NE(keep_coarse_variables(only_fine, &use), "");
  EXPECT_FALSE(use);
  EXPECT_TRUE(only_fine.vars.empty());
  VariableMap whole = records(kFineMapExtents + 1, 8);  // each variable coarse enough alone
  whole.vars[0].extents.resize(kFineMapExtents);
  whole.vars.push_back(records(kFineMapExtents, 8).vars[0]);
  whole.vars[1].name = "y";
  const std::string too_fine = variable_map_too_fine(whole);
  ASSERT_NE(too_fine, "");
  EXPECT_EQ(keep_coarse_variables(whole, &use), too_fine);
  EXPECT_EQ(whole.vars.size(), 2u);
  EXPECT_FALSE(use);
  VariableMap coarse = sample();
  EXPECT_EQ(keep_coarse_variables(coarse, &use), "");
  EXPECT_TRUE(use);
}

TEST(VariableMap, EncodingRoundTrips) {
  VariableMap m = sample();
  std::vector<uint8_t> b;
  encode_variable_map(m, b);
  b.push_back(0xAB);  // bytes after the map are the caller's
  size_t pos = 0;
  VariableMap back;
  std::string err;
  ASSERT_TRUE(decode_variable_map(b.data(), b.size(), &pos, 1000, back, &err)) << err;
  EXPECT_EQ(back, m);
  EXPECT_EQ(pos, b.size() - 1);
  // Checked against the file size given.
  pos = 0;
  EXPECT_FALSE(decode_variable_map(b.data(), b.size(), &pos, 500, back, &err));
  EXPECT_NE(err.find("beyond the file"), std::string::npos) << err;
  EXPECT_EQ(pos, 0u);
}

TEST(VariableMap, HostileEncodingsRejected) {
  VariableMap m = sample();
  std::vector<uint8_t> good;
  encode_variable_map(m, good);
  // Every truncation fails cleanly.
  for (size_t n = 0; n < good.size(); ++n) {
    size_t pos = 0;
    VariableMap out;
    std::string err;
    EXPECT_FALSE(decode_variable_map(good.data(), n, &pos, 1000, out, &err)) << n;
  }
  // Random byte flips never crash, and whatever decodes passes the checks.
  std::mt19937 rng(42);
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> b = good;
    for (int k = 0; k < 3; ++k) b[rng() % b.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    size_t pos = 0;
    VariableMap out;
    std::string err;
    if (decode_variable_map(b.data(), b.size(), &pos, 1000, out, &err)) {
      EXPECT_EQ(check_variable_map(out, 1000), "");
    }
  }
  // Huge counts are bounded by the bytes left, not allocated.
  std::vector<uint8_t> huge = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f};
  size_t pos = 0;
  VariableMap out;
  std::string err;
  EXPECT_FALSE(decode_variable_map(huge.data(), huge.size(), &pos, 1000, out, &err));
  EXPECT_NE(err.find("count"), std::string::npos) << err;
}

TEST(VariableMap, JsonNamesEveryVariable) {
  std::string j = variable_map_json(sample(), 1000);
  EXPECT_NE(j.find("\"key\":\"fields/T_F32LE_Array3D\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"shape\":[16,2]"), std::string::npos) << j;
  EXPECT_NE(j.find("\"filtered\":true"), std::string::npos) << j;
  EXPECT_NE(j.find("\"residual_bytes\":728"), std::string::npos) << j;
  EXPECT_EQ(json_quote("a\"b\\\n"), "\"a\\\"b\\\\\\n\"");
}

// One rule for every string the CLI and the forwarder print: valid UTF-8 as it is (a path
// "é" stays "é", not the two Latin-1 characters of its bytes), invalid bytes as U+FFFD,
// control characters escaped; the text always parses back.
TEST(JsonText, Utf8KeptInvalidBytesReplaced) {
  EXPECT_EQ(json_quote("/ckpt/\xc3\xa9t\xc3\xa9.h5"), "\"/ckpt/\xc3\xa9t\xc3\xa9.h5\"");
  EXPECT_EQ(json_quote("a\xff"
                       "b"),
            "\"a\xef\xbf\xbd"
            "b\"");
  EXPECT_EQ(json_quote(std::string("\x01\t", 2)), "\"\\u0001\\t\"");
  Json back = json_parse(json_text(Json{{"p", "x\xfe\x01y"}}));
  ASSERT_FALSE(back.is_discarded());
  EXPECT_EQ(back["p"], "x\xef\xbf\xbd\x01y");
}

TEST(ContainerVars, StoredWithTheFileAndReadBack) {
  TempDir d;
  std::vector<uint8_t> content(1000);
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<uint8_t>(i * 7);
  ContainerWriter w;
  std::string err;
  ASSERT_TRUE(w.open(d / "c.ckc", &err)) << err;
  uint32_t s = w.add_stream("agnostic", "bytes", "agnostic");
  ASSERT_TRUE(w.append_chunk(s, encode_chunk(content.data(), content.size(), "zstd", 3), &err));
  for (int i = 0; i < 2; ++i) {
    FileEntry f;
    f.path = "/ckpt/r" + std::to_string(i) + ".h5";
    f.rank = i;
    f.size = content.size();
    f.hash = content_hash(content.data(), content.size());
    f.ranges.push_back({0, content.size(), 0, 0});
    if (i == 0) f.vars = sample();
    w.add_file(std::move(f));
  }
  ASSERT_TRUE(w.commit(&err)) << err;
  ContainerReader r;
  ASSERT_TRUE(r.open(d / "c.ckc", &err)) << err;
  ASSERT_EQ(r.files().size(), 2u);
  EXPECT_EQ(r.files()[0].vars, sample());
  EXPECT_TRUE(r.files()[1].vars.empty());
  std::vector<uint8_t> back;
  ASSERT_TRUE(r.read_file(0, back, &err)) << err;
  EXPECT_EQ(back, content);
}

// sample() with /fields/T placed in a 6x3x8 global array at (2, 0, 4).
VariableMap placed_sample() {
  VariableMap m = sample();
  m.vars[0].global_shape = {6, 3, 8};
  m.vars[0].global_start = {2, 0, 4};
  return m;
}

TEST(VariablePlacement, ChecksNameTheProblem) {
  EXPECT_EQ(bad_placement(sample().vars[0]), "");
  EXPECT_EQ(bad_placement(placed_sample().vars[0]), "");
  Variable v = placed_sample().vars[0];
  v.global_start = {4, 0, 4};  // the last 2 rows of 6
  EXPECT_EQ(bad_placement(v), "");
  v.global_start = {5, 0, 4};  // 5 + 2 rows > 6
  EXPECT_EQ(bad_placement(v),
            "global start 5 + 2 elements exceed the global size 6 in dimension 0");
  v = placed_sample().vars[0];
  v.global_shape = {6, 3};
  EXPECT_NE(bad_placement(v).find("another rank"), std::string::npos) << bad_placement(v);
  v = placed_sample().vars[0];
  v.global_start = {~0ull, 0, 4};  // overflow of start + shape
  EXPECT_NE(bad_placement(v).find("exceed"), std::string::npos);
  v = sample().vars[2];  // the scalar
  v.global_shape = {};
  v.global_start = {};
  EXPECT_EQ(bad_placement(v), "");
  VariableMap m = placed_sample();
  m.vars[0].global_shape[2] = 7;
  EXPECT_NE(check_variable_map(m, 1000).find("/fields/T"), std::string::npos);
}

// Writes one file of content with map m into a container at path; "" or the error.
std::string write_one(const std::string& path, const std::vector<uint8_t>& content, VariableMap m,
                      std::vector<ViewShape> views = {}) {
  ContainerWriter w;
  std::string err;
  if (!w.open(path, &err)) return err;
  uint32_t s = w.add_stream("agnostic", "bytes", "agnostic");
  if (!w.append_chunk(s, encode_chunk(content.data(), content.size(), "zstd", 3), &err)) return err;
  FileEntry f;
  f.path = "/ckpt/r0.h5";
  f.size = content.size();
  f.hash = content_hash(content.data(), content.size());
  f.ranges.push_back({0, content.size(), 0, 0});
  f.vars = std::move(m);
  f.views = std::move(views);
  w.add_file(std::move(f));
  return w.commit(&err) ? "" : err;
}

TEST(ContainerVars, PlacementsStoredWithTheMapAndReadBack) {
  TempDir d;
  std::vector<uint8_t> content(1000, 3);
  ASSERT_EQ(write_one(d / "c.ckc", content, placed_sample()), "");
  ContainerReader r;
  std::string err;
  ASSERT_TRUE(r.open(d / "c.ckc", &err)) << err;
  EXPECT_EQ(r.files()[0].vars, placed_sample());
  VariableMap bad = placed_sample();
  bad.vars[0].global_start = {5, 0, 0};
  EXPECT_NE(write_one(d / "bad.ckc", content, bad).find("exceed the global size"),
            std::string::npos);
}

// A view of a 10 x 12 float64 array 40 bytes into the file.
ViewShape sample_view() {
  ViewShape v;
  v.disp = 40;
  v.dtype = static_cast<uint8_t>(DtypeCode::kF64LE);
  v.ndims = 2;
  v.gsizes[0] = 10;
  v.gsizes[1] = 12;
  return v;
}

TEST(ContainerVars, ViewsStoredWithTheFileAndReadBack) {
  TempDir d;
  std::vector<uint8_t> content(1000, 3);
  ViewShape other = sample_view();
  other.disp = 0;
  other.ndims = 3;
  other.gsizes[2] = 1;
  ASSERT_EQ(write_one(d / "c.ckc", content, placed_sample(), {sample_view(), other}), "");
  ContainerReader r;
  std::string err;
  ASSERT_TRUE(r.open(d / "c.ckc", &err)) << err;
  ASSERT_EQ(r.files()[0].views.size(), 2u);
  EXPECT_EQ(r.files()[0].views[0], sample_view());
  EXPECT_EQ(r.files()[0].views[1], other);
  EXPECT_EQ(r.files()[0].vars, placed_sample());
  ViewShape bytes = sample_view();
  bytes.dtype = 0;  // kBytes: not an array
  EXPECT_NE(write_one(d / "bad.ckc", content, placed_sample(), {bytes}).find("not an array"),
            std::string::npos);
}

// A one-file container's bytes with its index's tail patched in place (the index hash made
// to match): what opening it says. tail_at counts back from the index's end.
class PatchedIndex {
 public:
  PatchedIndex(const std::string& dir, std::vector<uint8_t> good)
      : dir_(dir), good_(std::move(good)) {
    const uint8_t* tail = good_.data() + good_.size() - 32;
    index_off_ = get64(tail);
    index_len_ = get64(tail + 8);
  }
  // Expects opening with bytes at (index end - tail_at + at) to fail, saying want.
  void opens_with(size_t tail_at, size_t at, const std::vector<uint8_t>& bytes,
                  const std::string& want) const {
    std::vector<uint8_t> b = good_;
    std::copy(bytes.begin(), bytes.end(), b.begin() + (index_off_ + index_len_ - tail_at + at));
    const uint64_t h = XXH64(b.data() + index_off_, index_len_, 0);
    for (int i = 0; i < 8; ++i) b[b.size() - 16 + i] = uint8_t(h >> (8 * i));
    test::write_all(dir_ + "/h.ckc", b);
    ContainerReader r;
    std::string err;
    EXPECT_FALSE(r.open(dir_ + "/h.ckc", &err)) << want;
    EXPECT_NE(err.find(want), std::string::npos) << err;
  }

 private:
  static uint64_t get64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
  }
  std::string dir_;
  std::vector<uint8_t> good_;
  uint64_t index_off_ = 0, index_len_ = 0;
};

// The placement record is the last thing in the index of a one-file container but for
// its view count: hostile values there are refused when the container is opened.
TEST(ContainerVars, HostilePlacementsAreRefused) {
  TempDir d;
  std::vector<uint8_t> content(1000, 3);
  ASSERT_EQ(write_one(d / "c.ckc", content, placed_sample()), "");
  const PatchedIndex c(d.path(), test::read_all(d / "c.ckc"));
  // u32 n_placed | u32 index | u32 rank | 3 x u64 shape | 3 x u64 start | u32 n_views (0)
  const size_t rec = 4 + 4 + 4 + 48 + 4;
  auto opens_with = [&](size_t at, std::vector<uint8_t> bytes, const std::string& want) {
    c.opens_with(rec, at, bytes, want);
  };
  opens_with(0, {2, 0, 0, 0}, "placement 1 out of range");             // more than recorded
  opens_with(0, {9, 0, 0, 0}, "placement count out of range");         // more than variables
  opens_with(4, {7, 0, 0, 0}, "placement 0 out of range");             // no such variable
  opens_with(4, {2, 0, 0, 0}, "placement 0 out of range");             // the scalar: rank 0 != 3
  opens_with(8, {2, 0, 0, 0}, "placement 0 out of range");             // rank 2 for a 3-D variable
  opens_with(12, {1, 0, 0, 0, 0, 0, 0, 0}, "exceed the global size");  // 2 rows in 1
  opens_with(36 + 16, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
             "exceed the global size");  // start near 2^64: no overflow to a small end
}

// The view record is the last thing in the index of a one-file container with one view.
TEST(ContainerVars, HostileViewsAreRefused) {
  TempDir d;
  std::vector<uint8_t> content(1000, 3);
  ASSERT_EQ(write_one(d / "c.ckc", content, VariableMap{}, {sample_view()}), "");
  const PatchedIndex c(d.path(), test::read_all(d / "c.ckc"));
  // u32 n_views | u64 disp | u8 dtype | u32 ndims | 2 x u64 gsizes
  const size_t rec = 4 + 8 + 1 + 4 + 16;
  auto opens_with = [&](size_t at, std::vector<uint8_t> bytes, const std::string& want) {
    c.opens_with(rec, at, bytes, want);
  };
  opens_with(0, {2, 0, 0, 0}, "view count out of range");
  opens_with(12, {0}, "not an array");    // dtype kBytes
  opens_with(12, {200}, "not an array");  // no such dtype
  opens_with(13, {0, 0, 0, 0}, "a view of 0 dimensions");
  opens_with(13, {9, 0, 0, 0}, "a view of 9 dimensions");
  opens_with(13, {3, 0, 0, 0}, "cut short");                 // a third size past the end
  opens_with(17, {0, 0, 0, 0, 0, 0, 0, 0}, "not an array");  // an empty dimension
  opens_with(4, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, "not an array");
}

TEST(ContainerVars, WriterRefusesAMapThatDoesNotFitTheFile) {
  TempDir d;
  std::vector<uint8_t> content(100, 1);
  ContainerWriter w;
  std::string err;
  ASSERT_TRUE(w.open(d / "c.ckc", &err)) << err;
  uint32_t s = w.add_stream("agnostic", "bytes", "agnostic");
  ASSERT_TRUE(w.append_chunk(s, encode_chunk(content.data(), content.size(), "raw", 0), &err));
  FileEntry f;
  f.path = "/ckpt/small.bin";
  f.size = content.size();
  f.hash = content_hash(content.data(), content.size());
  f.ranges.push_back({0, content.size(), 0, 0});
  f.vars = sample();  // extents up to byte 540
  w.add_file(std::move(f));
  EXPECT_FALSE(w.commit(&err));
  EXPECT_NE(err.find("beyond the file"), std::string::npos) << err;
}

}  // namespace
}  // namespace ckptfwd
