// netCDF classic header parser (src/schema/netcdf_classic.h). The headers are built here
// byte by byte from the published format, so each test states the layout it expects;
// tests/integration/test_infer_netcdf.sh compares with files the netCDF library writes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "schema/netcdf_classic.h"
#include "store/container/variable_map.h"

namespace ckptfwd::schema {
namespace {

enum : uint32_t { BYTE = 1, CHAR, SHORT, INT, FLOAT, DOUBLE, UBYTE, USHORT, UINT, INT64, UINT64 };

struct Att {
  std::string name;
  uint32_t type;
  uint64_t nelems;
};

struct Var {
  std::string name;
  uint32_t type;
  std::vector<uint64_t> dimids;
  std::vector<Att> atts = {};
  uint64_t begin = 0;  // set by layout() unless a test overrides it
};

uint64_t type_size(uint32_t t) {
  static const uint64_t s[] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
  return t < 12 ? s[t] : 0;
}
uint64_t pad4(uint64_t n) { return (n + 3) / 4 * 4; }

// A netCDF classic file: header fields, laid out and encoded like the netCDF library.
struct Cdf {
  int version = 1;
  uint64_t numrecs = 0;
  std::vector<std::pair<std::string, uint64_t>> dims;  // length 0: the record dimension
  std::vector<Att> gatts;
  std::vector<Var> vars;

  unsigned cs() const { return version == 5 ? 8 : 4; }

  void be(std::vector<uint8_t>& b, uint64_t v, unsigned k) const {
    for (unsigned i = k; i-- > 0;) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void name(std::vector<uint8_t>& b, const std::string& s) const {
    be(b, s.size(), cs());
    b.insert(b.end(), s.begin(), s.end());
    b.resize(pad4(b.size()), 0);
  }
  void atts(std::vector<uint8_t>& b, const std::vector<Att>& a) const {
    be(b, a.empty() ? 0 : 0x0C, 4);
    be(b, a.size(), cs());
    for (const Att& x : a) {
      name(b, x.name);
      be(b, x.type, 4);
      be(b, x.nelems, cs());
      b.resize(b.size() + pad4(x.nelems * type_size(x.type)), 'v');
    }
  }
  // Tests give bad dimension ids too: those count as length 1.
  uint64_t dim_len(uint64_t id) const { return id < dims.size() ? dims[id].second : 1; }
  bool is_record(const Var& v) const { return !v.dimids.empty() && dim_len(v.dimids[0]) == 0; }
  // Bytes of one record (record variable) or of the whole variable, unpadded.
  uint64_t bytes(const Var& v) const {
    uint64_t n = type_size(v.type);
    for (size_t k = is_record(v) ? 1 : 0; k < v.dimids.size(); ++k) n *= dim_len(v.dimids[k]);
    return n;
  }

  std::vector<uint8_t> header() const {
    std::vector<uint8_t> b = {'C', 'D', 'F', static_cast<uint8_t>(version)};
    be(b, numrecs, cs());
    be(b, dims.empty() ? 0 : 0x0A, 4);
    be(b, dims.size(), cs());
    for (const auto& [n, len] : dims) {
      name(b, n);
      be(b, len, cs());
    }
    atts(b, gatts);
    be(b, vars.empty() ? 0 : 0x0B, 4);
    be(b, vars.size(), cs());
    for (const Var& v : vars) {
      name(b, v.name);
      be(b, v.dimids.size(), cs());
      for (uint64_t d : v.dimids) be(b, d, cs());
      atts(b, v.atts);
      be(b, v.type, 4);
      be(b, pad4(bytes(v)), cs());
      be(b, v.begin, version == 1 ? 4 : 8);
    }
    return b;
  }

  uint64_t recsize() const {
    uint64_t r = 0, n = 0, last = 0;
    for (const Var& v : vars)
      if (is_record(v)) r += pad4(last = bytes(v)), ++n;
    return n == 1 ? last : r;
  }

  // Fixed variables right after the header, then the records; returns the file size.
  uint64_t layout() {
    uint64_t at = header().size();
    for (Var& v : vars)
      if (!is_record(v)) v.begin = at, at += pad4(bytes(v));
    uint64_t rec = at;
    for (Var& v : vars)
      if (is_record(v)) v.begin = rec, rec += pad4(bytes(v));
    return at + numrecs * recsize();
  }

  // Header, then data bytes that differ from byte to byte, up to `size`.
  std::vector<uint8_t> file(uint64_t size) const {
    std::vector<uint8_t> f = header();
    for (uint64_t i = f.size(); i < size; ++i) f.push_back(static_cast<uint8_t>(i * 7 + 1));
    f.resize(size);
    return f;
  }
};

bool infer(const std::vector<uint8_t>& f, VariableMap& m, std::string* why) {
  return infer_netcdf_classic(f.data(), f.size(), m, why);
}

// The map of a file that must parse; fails the test with the parser's reason otherwise.
VariableMap parse_ok(const std::vector<uint8_t>& f) {
  VariableMap m;
  std::string why;
  EXPECT_TRUE(infer(f, m, &why)) << why;
  EXPECT_EQ(check_variable_map(m, f.size()), "");
  return m;
}

// The reason a file is rejected; fails the test if it parses.
std::string rejected(const std::vector<uint8_t>& f) {
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer(f, m, &why));
  EXPECT_FALSE(why.empty());
  return why;
}

const Variable* find(const VariableMap& m, const std::string& name) {
  for (const Variable& v : m.vars)
    if (v.name == name) return &v;
  return nullptr;
}

// x(3), y(2), time (record); a short[x], a double scalar, int[time], byte[time][y].
Cdf mixed(int version) {
  Cdf c;
  c.version = version;
  c.numrecs = 3;
  c.dims = {{"x", 3}, {"time", 0}, {"y", 2}};
  c.gatts = {{"title", CHAR, 5}, {"scale", DOUBLE, 2}};
  c.vars = {{"a", SHORT, {0}, {{"units", CHAR, 1}}},
            {"s", DOUBLE, {}},
            {"t", INT, {1}},
            {"r", BYTE, {1, 2}, {{"valid", SHORT, 3}}}};
  return c;
}

void expect_mixed(const Cdf& c, const VariableMap& m, uint64_t size) {
  const uint64_t h = c.header().size();
  EXPECT_EQ(m.source, "netcdf");
  EXPECT_EQ(m.detail, "CDF-" + std::to_string(c.version));
  ASSERT_EQ(m.vars.size(), 4u);
  // File order is kept.
  EXPECT_EQ(m.vars[0].name, "a");
  EXPECT_EQ(m.vars[3].name, "r");

  const Variable& a = m.vars[0];
  EXPECT_EQ(a.key, "a_I16BE_Array1D");
  EXPECT_EQ(a.dtype, "I16BE");
  EXPECT_EQ(a.elem_size, 2u);
  EXPECT_EQ(a.shape, (std::vector<uint64_t>{3}));
  ASSERT_EQ(a.extents.size(), 1u);
  // 6 bytes; its padding to 8 is residual.
  EXPECT_EQ(a.extents[0], (VarExtent{h, 6, {0}, {3}, false}));

  const Variable& s = m.vars[1];
  EXPECT_EQ(s.key, "s_F64BE_Scalar");
  EXPECT_TRUE(s.shape.empty());
  ASSERT_EQ(s.extents.size(), 1u);
  EXPECT_EQ(s.extents[0], (VarExtent{h + 8, 8, {}, {}, false}));

  // Records start at h + 16; a record is t (4 bytes) and r (2 bytes padded to 4).
  const Variable& t = m.vars[2];
  EXPECT_EQ(t.key, "t_I32BE_Array1D");
  EXPECT_EQ(t.shape, (std::vector<uint64_t>{3}));
  ASSERT_EQ(t.extents.size(), 3u);
  const Variable& r = m.vars[3];
  EXPECT_EQ(r.key, "r_I8_Array2D");
  EXPECT_EQ(r.shape, (std::vector<uint64_t>{3, 2}));
  ASSERT_EQ(r.extents.size(), 3u);
  for (uint64_t k = 0; k < 3; ++k) {
    EXPECT_EQ(t.extents[k], (VarExtent{h + 16 + 8 * k, 4, {k}, {1}, false}));
    EXPECT_EQ(r.extents[k], (VarExtent{h + 20 + 8 * k, 2, {k, 0}, {1, 2}, false}));
  }
  EXPECT_EQ(mapped_bytes(m), 6u + 8u + 3 * 6u);
  EXPECT_EQ(size, h + 16 + 24);
}

TEST(NetcdfClassic, Cdf1FixedAndRecordVariables) {
  Cdf c = mixed(1);
  uint64_t size = c.layout();
  auto f = c.file(size);
  ASSERT_TRUE(is_netcdf_classic(f.data(), f.size()));
  expect_mixed(c, parse_ok(f), size);
}

TEST(NetcdfClassic, Cdf2SameLayoutWithEightByteBegins) {
  Cdf c1 = mixed(1), c2 = mixed(2);
  c1.layout();
  uint64_t size = c2.layout();
  // Four variables, four more bytes of begin each.
  EXPECT_EQ(c2.header().size(), c1.header().size() + 16);
  expect_mixed(c2, parse_ok(c2.file(size)), size);
}

TEST(NetcdfClassic, Cdf5EightByteCountsAndItsTypes) {
  Cdf c = mixed(5);
  uint64_t size = c.layout();
  expect_mixed(c, parse_ok(c.file(size)), size);

  Cdf d;
  d.version = 5;
  d.dims = {{"n", 3}};
  d.gatts = {{"big", UINT64, 1}, {"u", USHORT, 3}};
  d.vars = {{"ub", UBYTE, {0}},  {"us", USHORT, {0}}, {"ui", UINT, {0}},
            {"i64", INT64, {0}}, {"u64", UINT64, {}}, {"f", FLOAT, {0}}};
  size = d.layout();
  VariableMap m = parse_ok(d.file(size));
  ASSERT_EQ(m.vars.size(), 6u);
  const char* dtypes[] = {"U8", "U16BE", "U32BE", "I64BE", "U64BE", "F32BE"};
  const uint64_t lens[] = {3, 6, 12, 24, 8, 12};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(m.vars[i].dtype, dtypes[i]);
    ASSERT_EQ(m.vars[i].extents.size(), 1u);
    EXPECT_EQ(m.vars[i].extents[0].file_off, d.vars[i].begin);
    EXPECT_EQ(m.vars[i].extents[0].len, lens[i]);
  }
  EXPECT_EQ(m.vars[3].key, "i64_I64BE_Array1D");
  EXPECT_EQ(m.vars[4].key, "u64_U64BE_Scalar");
}

TEST(NetcdfClassic, Cdf5TypesAreRejectedInCdf1And2) {
  for (int version : {1, 2}) {
    Cdf c;
    c.version = version;
    c.vars = {{"v", INT64, {}}};
    uint64_t size = c.layout();
    EXPECT_NE(rejected(c.file(size)).find("unknown type 10"), std::string::npos);
    c.vars = {{"v", INT, {}, {{"a", UBYTE, 1}}}};
    size = c.layout();
    EXPECT_NE(rejected(c.file(size)).find("unknown type 7"), std::string::npos);
  }
}

TEST(NetcdfClassic, SingleRecordVariableIsNotPadded) {
  for (int version : {1, 2, 5}) {
    Cdf c;
    c.version = version;
    c.numrecs = 4;
    c.dims = {{"t", 0}, {"x", 3}};
    c.vars = {{"fix", SHORT, {1}}, {"rec", CHAR, {0, 1}}};
    uint64_t size = c.layout();
    EXPECT_EQ(c.recsize(), 3u);
    VariableMap m = parse_ok(c.file(size));
    const Variable* rec = find(m, "rec");
    ASSERT_NE(rec, nullptr);
    EXPECT_EQ(rec->key, "rec_CHAR_Array2D");
    EXPECT_EQ(rec->shape, (std::vector<uint64_t>{4, 3}));
    ASSERT_EQ(rec->extents.size(), 4u);
    for (uint64_t r = 0; r < 4; ++r)
      EXPECT_EQ(rec->extents[r], (VarExtent{c.vars[1].begin + 3 * r, 3, {r, 0}, {1, 3}, false}));
    EXPECT_EQ(rec->extents[3].file_off + 3, size);
  }
}

TEST(NetcdfClassic, StreamingNumrecsTakesTheWholeRecordsTheFileHolds) {
  for (int version : {1, 5}) {
    Cdf c;
    c.version = version;
    c.dims = {{"t", 0}, {"x", 2}};
    c.vars = {{"a", INT, {0}}, {"b", SHORT, {0, 1}}, {"c", BYTE, {0}}};
    c.numrecs = 2;
    const uint64_t two = c.layout();  // recsize 4 + 4 + 4
    c.numrecs = version == 5 ? ~uint64_t{0} : 0xFFFFFFFFu;
    // Two records and the third's a and b, but not its c: two whole records.
    VariableMap m = parse_ok(c.file(two + 8));
    for (const Variable& v : m.vars) {
      EXPECT_EQ(v.shape[0], 2u) << v.name;
      EXPECT_EQ(v.extents.size(), 2u) << v.name;
    }
    // The third record's c is there without its padding: three.
    m = parse_ok(c.file(two + 9));
    for (const Variable& v : m.vars) EXPECT_EQ(v.shape[0], 3u) << v.name;
    // Not even one record.
    m = parse_ok(c.file(c.header().size() + 3));
    for (const Variable& v : m.vars) {
      EXPECT_EQ(v.shape[0], 0u);
      EXPECT_TRUE(v.extents.empty());
    }
  }
}

TEST(NetcdfClassic, ZeroRecordsAndScalars) {
  Cdf c;
  c.version = 2;
  c.dims = {{"t", 0}, {"x", 5}};
  c.vars = {{"time", DOUBLE, {0}}, {"field", FLOAT, {0, 1}}, {"step", INT, {}}, {"c", CHAR, {}}};
  uint64_t size = c.layout();
  VariableMap m = parse_ok(c.file(size));
  ASSERT_EQ(m.vars.size(), 4u);
  EXPECT_EQ(m.vars[0].key, "time_F64BE_Array1D");
  EXPECT_EQ(m.vars[0].shape, (std::vector<uint64_t>{0}));
  EXPECT_TRUE(m.vars[0].extents.empty());
  EXPECT_EQ(m.vars[1].shape, (std::vector<uint64_t>{0, 5}));
  EXPECT_TRUE(m.vars[1].extents.empty());
  EXPECT_EQ(m.vars[2].key, "step_I32BE_Scalar");
  ASSERT_EQ(m.vars[2].extents.size(), 1u);
  EXPECT_EQ(m.vars[2].extents[0], (VarExtent{c.vars[2].begin, 4, {}, {}, false}));
  ASSERT_EQ(m.vars[3].extents.size(), 1u);
  EXPECT_EQ(m.vars[3].extents[0].len, 1u);
  // Its padding to 4 is residual: the file ends 3 bytes after it.
  EXPECT_EQ(m.vars[3].extents[0].file_off + 4, size);
}

TEST(NetcdfClassic, EmptyFileHeaderHasNoVariables) {
  for (int version : {1, 2, 5}) {
    Cdf c;
    c.version = version;
    VariableMap m = parse_ok(c.file(c.layout()));
    EXPECT_EQ(m.source, "netcdf");
    EXPECT_TRUE(m.vars.empty());
  }
}

TEST(NetcdfClassic, DataPastTheEndIsNotAFile) {
  for (int version : {1, 2, 5}) {
    Cdf c = mixed(version);
    auto f = c.file(c.layout());
    // The file ends with the last record's r (2 bytes) and its padding (2 bytes). Every
    // prefix that cuts a header or data byte is rejected whole; the padding may go.
    EXPECT_EQ(parse_ok(std::vector<uint8_t>(f.begin(), f.end() - 2)).vars.size(), 4u);
    for (size_t n = 0; n + 2 < f.size(); ++n) {
      std::vector<uint8_t> cut(f.begin(), f.begin() + n);
      VariableMap m;
      std::string why;
      EXPECT_FALSE(infer(cut, m, &why)) << n;
      EXPECT_NE(why.find("byte"), std::string::npos) << n << ": " << why;
    }
    // Bytes past the last record are residual.
    f.resize(f.size() + 10, 0);
    EXPECT_EQ(parse_ok(f).vars.size(), 4u);
  }
}

TEST(NetcdfClassic, NumrecsBeyondTheFileIsRejected) {
  Cdf c = mixed(1);
  uint64_t size = c.layout();
  c.numrecs = 4;
  EXPECT_NE(rejected(c.file(size)).find("beyond the end of the file"), std::string::npos);
  c.numrecs = 0x7FFFFFFF;
  rejected(c.file(size));
}

TEST(NetcdfClassic, OverlappingVariablesAreRejected) {
  Cdf c = mixed(2);
  uint64_t size = c.layout();
  c.vars[1].begin = c.vars[0].begin + 4;  // s over a's last element
  std::string why = rejected(c.file(size));
  EXPECT_NE(why.find("overlap at byte"), std::string::npos) << why;
  // A record variable over a fixed one.
  c.layout();
  c.vars[3].begin = c.vars[1].begin;
  why = rejected(c.file(size));
  EXPECT_NE(why.find("overlap"), std::string::npos) << why;
}

TEST(NetcdfClassic, VariableInsideTheHeaderIsRejected) {
  Cdf c = mixed(1);
  uint64_t size = c.layout();
  c.vars[0].begin = 8;
  std::string why = rejected(c.file(size));
  EXPECT_NE(why.find("inside the header"), std::string::npos) << why;
}

TEST(NetcdfClassic, MalformedHeadersAreRejected) {
  // Each is wrong in the header itself, whatever data follows (and some layouts would
  // not fit in memory).
  auto expect_rejected = [](Cdf c, const char* what) {
    c.layout();
    std::string why = rejected(c.file(c.header().size() + 256));
    EXPECT_NE(why.find(what), std::string::npos) << why;
  };
  Cdf c = mixed(1);
  c.dims.push_back({"u", 0});
  expect_rejected(c, "second record dimension");
  c = mixed(1);
  c.vars[3].dimids = {2, 1};
  expect_rejected(c, "record dimension other than first");
  c = mixed(1);
  c.vars[0].dimids = {7};
  expect_rejected(c, "names dimension 7");
  c = mixed(1);
  c.vars[2].name = "a";
  expect_rejected(c, "second variable named 'a'");
  c = mixed(1);
  c.vars[2].name = "";
  expect_rejected(c, "empty variable name");
  c = mixed(1);
  c.vars[0].dimids.assign(65, 0);
  expect_rejected(c, "65 dimensions");
  c = mixed(1);
  c.vars[0].type = 0;
  expect_rejected(c, "unknown type 0");
  c = mixed(1);
  c.gatts[0].type = 12;
  expect_rejected(c, "unknown type 12");
  c = mixed(5);
  c.dims = {{"x", uint64_t{1} << 40}, {"y", uint64_t{1} << 40}};
  c.vars = {{"huge", DOUBLE, {0, 1}}};
  expect_rejected(c, "overflows");
}

TEST(NetcdfClassic, HostileCountsAndTagsAreRejected) {
  Cdf c = mixed(1);
  auto f = c.file(c.layout());
  // Magic, numrecs, the dimension list's tag at byte 8 and its count at 12, the first name's
  // length at 16.
  auto bad = f;
  bad[12] = 0x7F;
  EXPECT_NE(
      rejected(bad).find("count of the dimension list exceeds the rest of the file at byte 8"),
      std::string::npos);
  bad = f;
  bad[11] = 0x0B;  // a variable tag where the dimension list is
  EXPECT_NE(rejected(bad).find("bad tag of the dimension list at byte 8"), std::string::npos);
  // An absent list (tag 0) with a count.
  Cdf e;
  e.version = 1;
  auto g = e.file(e.layout());
  g[15] = 1;
  EXPECT_NE(rejected(g).find("absent dimension list with a non-zero count"), std::string::npos);
  // A name longer than the file.
  bad = f;
  bad[16] = 0x10;
  EXPECT_NE(rejected(bad).find("longer than the rest of the file at byte 16"), std::string::npos);
}

TEST(NetcdfClassic, TooManyRecordsAreNotMapped) {
  Cdf c;
  c.version = 1;
  c.dims = {{"t", 0}};
  c.vars = {{"b", BYTE, {0}}};
  c.numrecs = (uint64_t{1} << 20) + 1;
  auto f = c.file(c.layout());
  EXPECT_NE(rejected(f).find("records to map"), std::string::npos);
  c.numrecs = 1000;
  f = c.file(c.layout());
  EXPECT_EQ(parse_ok(f).vars[0].extents.size(), 1000u);
}

TEST(NetcdfClassic, NotNetcdf) {
  std::vector<uint8_t> f = {'C', 'D', 'F', 3, 0, 0, 0, 0};
  EXPECT_FALSE(is_netcdf_classic(f.data(), f.size()));
  rejected(f);
  f = {'C', 'D', 'F'};
  EXPECT_FALSE(is_netcdf_classic(f.data(), f.size()));
  f = {0x89, 'H', 'D', 'F', 1};
  rejected(f);
}

// Every single-bit flip of every header byte: rejected, or a map that is valid for the
// file. Nothing may read outside it (the ASan build checks that).
TEST(NetcdfClassic, BitFlippedHeadersGiveValidMapsOrNone) {
  for (int version : {1, 2, 5}) {
    Cdf c = mixed(version);
    auto f = c.file(c.layout());
    const size_t h = c.header().size();
    int accepted = 0;
    for (size_t i = 0; i < h; ++i) {
      for (int bit = 0; bit < 8; ++bit) {
        auto g = f;
        g[i] ^= static_cast<uint8_t>(1 << bit);
        VariableMap m;
        std::string why;
        if (infer(g, m, &why)) {
          ++accepted;
          EXPECT_EQ(check_variable_map(m, g.size()), "") << i << "." << bit;
        } else {
          EXPECT_FALSE(why.empty());
        }
      }
    }
    // Flips in names and attribute values change nothing structural.
    EXPECT_GT(accepted, 0);
  }
}

}  // namespace
}  // namespace ckptfwd::schema
