#include "schema/netcdf_classic.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ckptfwd::schema {

namespace {

// List tags of the header (each a 4-byte big-endian integer).
constexpr uint32_t kTagDimension = 0x0A;
constexpr uint32_t kTagVariable = 0x0B;
constexpr uint32_t kTagAttribute = 0x0C;

// The variable map takes at most 64 dimensions (variable_map.cc); netCDF allows 1024, but
// no checkpoint comes near either.
constexpr uint64_t kMaxRank = 64;
// Each record of each record variable is one extent of about 100 bytes in memory. A
// hostile header may claim one record per byte of the file, so the count is bounded; a
// file past it is stored agnostic, which is always correct.
constexpr uint64_t kMaxExtents = uint64_t{1} << 20;

struct NcType {
  const char* dtype;
  uint32_t size;
};

// nc_type 1..6 of every version, 7..11 only in CDF-5; nullptr for anything else.
const NcType* nc_type(uint32_t t, bool cdf5) {
  static const NcType types[] = {{"I8", 1},    {"CHAR", 1},  {"I16BE", 2}, {"I32BE", 4},
                                 {"F32BE", 4}, {"F64BE", 8}, {"U8", 1},    {"U16BE", 2},
                                 {"U32BE", 4}, {"I64BE", 8}, {"U64BE", 8}};
  if (t < 1 || t > (cdf5 ? 11u : 6u)) return nullptr;
  return &types[t - 1];
}

bool mul(uint64_t a, uint64_t b, uint64_t& out) { return !__builtin_mul_overflow(a, b, &out); }
bool add(uint64_t a, uint64_t b, uint64_t& out) { return !__builtin_add_overflow(a, b, &out); }
// a rounded up to a multiple of 4.
bool pad4(uint64_t a, uint64_t& out) { return add(a, (4 - a % 4) % 4, out); }

// Big-endian cursor over the header. Each read is checked against the end of the file;
// the first failure records what was being read and where, and the parse stops there.
class Cursor {
 public:
  Cursor(const uint8_t* data, uint64_t size, int version)
      : d_(data), n_(size), count_size_(version == 5 ? 8 : 4), offset_size_(version == 1 ? 4 : 8) {}

  uint64_t pos() const { return pos_; }
  uint64_t left() const { return n_ - pos_; }
  unsigned count_size() const { return count_size_; }
  unsigned offset_size() const { return offset_size_; }
  const std::string& error() const { return err_; }

  bool fail(const std::string& what, uint64_t at) {
    err_ = what + " at byte " + std::to_string(at);
    return false;
  }
  bool fail(const std::string& what) { return fail(what, pos_); }

  bool u32(uint32_t& v, const char* what) {
    uint64_t x = 0;
    if (!be(4, x, what)) return false;
    v = static_cast<uint32_t>(x);
    return true;
  }
  // NON_NEG: element counts, dimension lengths, dimension ids, vsize.
  bool count(uint64_t& v, const char* what) { return be(count_size_, v, what); }
  // OFFSET: a variable's begin.
  bool offset(uint64_t& v, const char* what) { return be(offset_size_, v, what); }

  // Skips n bytes and the padding to the next multiple of 4 after them.
  bool skip_padded(uint64_t n, const char* what) {
    uint64_t p = 0;
    if (!pad4(n, p) || p > left())
      return fail(std::string(what) + " runs past the end of the file");
    pos_ += p;
    return true;
  }

  // A name: its length, its bytes, padding to 4.
  bool name(std::string& out, const char* what) {
    uint64_t at = pos_, len = 0;
    if (!count(len, what)) return false;
    if (len == 0) return fail(std::string("empty ") + what, at);
    if (len > left()) return fail(std::string(what) + " longer than the rest of the file", at);
    out.assign(reinterpret_cast<const char*>(d_ + pos_), len);
    return skip_padded(len, what);
  }

 private:
  bool be(unsigned k, uint64_t& v, const char* what) {
    if (k > left()) return fail(std::string("file ends inside ") + what);
    v = 0;
    for (unsigned i = 0; i < k; ++i) v = v << 8 | d_[pos_ + i];
    pos_ += k;
    return true;
  }

  const uint8_t* d_;
  uint64_t n_;
  uint64_t pos_ = 0;
  unsigned count_size_;
  unsigned offset_size_;
  std::string err_;
};

// A list header: ABSENT (ZERO ZERO) or the tag and its element count. The count is
// bounded by the bytes left, each element taking at least min_elem bytes, so a hostile
// count ends the parse instead of a long loop or a large allocation.
bool list_header(Cursor& c, uint32_t tag, const char* what, uint64_t min_elem, uint64_t& n) {
  uint64_t at = c.pos();
  uint32_t t = 0;
  if (!c.u32(t, what) || !c.count(n, what)) return false;
  if (t == 0) {
    if (n != 0) return c.fail(std::string("absent ") + what + " with a non-zero count", at);
    return true;
  }
  if (t != tag) return c.fail(std::string("bad tag of the ") + what, at);
  if (n > c.left() / min_elem)
    return c.fail(std::string("count of the ") + what + " exceeds the rest of the file", at);
  return true;
}

// An attribute list (global or a variable's): names and values are skipped, their types
// checked.
bool skip_attributes(Cursor& c, bool cdf5, const char* what) {
  const uint64_t cs = c.count_size();
  uint64_t n = 0;
  // name (count + at least 4 bytes), nc_type, nelems
  if (!list_header(c, kTagAttribute, what, cs + 4 + 4 + cs, n)) return false;
  std::string name;
  for (uint64_t i = 0; i < n; ++i) {
    if (!c.name(name, "attribute name")) return false;
    uint64_t at = c.pos();
    uint32_t t = 0;
    uint64_t nelems = 0, bytes = 0;
    if (!c.u32(t, "attribute type")) return false;
    const NcType* type = nc_type(t, cdf5);
    if (!type)
      return c.fail("unknown type " + std::to_string(t) + " of attribute '" + name + "'", at);
    at = c.pos();
    if (!c.count(nelems, "attribute length")) return false;
    if (!mul(nelems, type->size, bytes) || bytes > c.left())
      return c.fail("values of attribute '" + name + "' run past the end of the file", at);
    if (!c.skip_padded(bytes, "attribute values")) return false;
  }
  return true;
}

// The dimension list: each dimension's length, and which one is the record dimension.
struct NcDims {
  std::vector<uint64_t> len;
  uint64_t record = ~uint64_t{0};  // none
};

struct NcVar {
  std::string name;
  const NcType* type = nullptr;
  std::vector<uint64_t> dimids;
  uint64_t begin = 0;
  uint64_t header_at = 0;  // where its entry starts, for messages
  bool record = false;
  std::vector<uint64_t> dims;  // lengths; a record variable's first is filled in later
  uint64_t bytes = 0;          // a fixed variable's, or one record's, without padding
};

// The record layout (size_variables): how many record variables, and the bytes between
// the starts of two records.
struct NcRecords {
  uint64_t vars = 0;
  uint64_t size = 0;
};

// dim_list: names (not kept) and lengths; length 0 marks the record (unlimited) dimension,
// of which classic files have at most one.
bool read_dimensions(Cursor& c, NcDims& dims) {
  const uint64_t cs = c.count_size();
  uint64_t ndims = 0;
  if (!list_header(c, kTagDimension, "dimension list", cs + 4 + cs, ndims)) return false;
  for (uint64_t i = 0; i < ndims; ++i) {
    std::string name;
    uint64_t len = 0, at = c.pos();
    if (!c.name(name, "dimension name") || !c.count(len, "dimension length")) return false;
    if (len == 0) {
      if (dims.record != ~uint64_t{0}) return c.fail("second record dimension '" + name + "'", at);
      dims.record = i;
    }
    dims.len.push_back(len);
  }
  return true;
}

// One entry of var_list into v: name (unique among names), rank, dimension ids (the
// record dimension only first), attributes, nc_type, vsize, begin.
bool read_variable(Cursor& c, bool cdf5, const NcDims& dims, std::set<std::string>& names,
                   NcVar& v) {
  v.header_at = c.pos();
  if (!c.name(v.name, "variable name")) return false;
  if (!names.insert(v.name).second)
    return c.fail("second variable named '" + v.name + "'", v.header_at);
  uint64_t rank = 0, at = c.pos();
  if (!c.count(rank, "variable rank")) return false;
  if (rank > kMaxRank)
    return c.fail("variable '" + v.name + "' has " + std::to_string(rank) +
                      " dimensions (at most " + std::to_string(kMaxRank) + ")",
                  at);
  for (uint64_t k = 0; k < rank; ++k) {
    uint64_t id = 0;
    at = c.pos();
    if (!c.count(id, "dimension id")) return false;
    if (id >= dims.len.size())
      return c.fail("variable '" + v.name + "' names dimension " + std::to_string(id) + " of " +
                        std::to_string(dims.len.size()),
                    at);
    if (id == dims.record && k != 0)
      return c.fail("variable '" + v.name + "' has the record dimension other than first", at);
    v.dimids.push_back(id);
  }
  if (!skip_attributes(c, cdf5, "variable attribute list")) return false;
  uint32_t t = 0;
  uint64_t vsize = 0;
  at = c.pos();
  if (!c.u32(t, "variable type")) return false;
  if (!(v.type = nc_type(t, cdf5)))
    return c.fail("unknown type " + std::to_string(t) + " of variable '" + v.name + "'", at);
  // vsize is not used: it saturates for large variables, and the netCDF library itself
  // recomputes sizes from the dimensions.
  return c.count(vsize, "variable size") && c.offset(v.begin, "variable begin");
}

// var_list: every variable's entry, in the header's order.
bool read_variables(Cursor& c, bool cdf5, const NcDims& dims, std::vector<NcVar>& vars) {
  const uint64_t cs = c.count_size();
  uint64_t nvars = 0;
  const uint64_t min_var = cs + 4 + cs + (4 + cs) + 4 + cs + c.offset_size();
  if (!list_header(c, kTagVariable, "variable list", min_var, nvars)) return false;
  std::set<std::string> names;
  for (uint64_t i = 0; i < nvars; ++i) {
    NcVar v;
    if (!read_variable(c, cdf5, dims, names, v)) return false;
    vars.push_back(std::move(v));
  }
  return true;
}

// Sizes (each variable's record flag, dims and bytes), and the record size: the padded
// record slices of all record variables, except that a single record variable is not
// padded (as the netCDF library and PnetCDF lay records out). "" or what overflows.
std::string size_variables(std::vector<NcVar>& vars, const NcDims& dims, NcRecords& records) {
  for (NcVar& v : vars) {
    v.record = !v.dimids.empty() && v.dimids[0] == dims.record;
    uint64_t n = v.type->size;
    for (size_t k = v.record ? 1 : 0; k < v.dimids.size(); ++k) {
      v.dims.push_back(dims.len[v.dimids[k]]);
      if (!mul(n, dims.len[v.dimids[k]], n))
        return "size of variable '" + v.name + "' overflows at byte " + std::to_string(v.header_at);
    }
    v.bytes = n;
    if (v.record) {
      uint64_t padded = 0;
      if (!pad4(n, padded) || !add(records.size, padded, records.size))
        return "record size overflows at variable '" + v.name + "' at byte " +
               std::to_string(v.header_at);
      ++records.vars;
    }
  }
  if (records.vars == 1)
    for (const NcVar& v : vars)
      if (v.record) records.size = v.bytes;
  return "";
}

// The streaming numrecs: as many whole records as the file holds, each record variable's
// slice of the last record ending inside the file. "" or what lies beyond the file.
std::string count_streamed_records(const std::vector<NcVar>& vars, const NcRecords& records,
                                   uint64_t size, uint64_t& numrecs) {
  numrecs = 0;
  if (records.vars == 0 || records.size == 0) return "";
  uint64_t end = 0;
  for (const NcVar& v : vars) {
    if (!v.record || v.bytes == 0) continue;
    uint64_t e = 0;
    if (!add(v.begin, v.bytes, e))
      return "record variable '" + v.name + "' lies beyond the end of the file at byte " +
             std::to_string(v.begin);
    end = std::max(end, e);
  }
  if (end > 0 && end <= size) numrecs = (size - end) / records.size + 1;
  return "";
}

// Every variable with data must lie after the header and inside the file; a header
// that promises more data than the file holds (a truncated file) is not mapped at all.
// At most kMaxExtents extents in all. "" or the first variable that does not fit.
std::string check_data_in_file(const std::vector<NcVar>& vars, uint64_t numrecs, uint64_t recsize,
                               uint64_t header_end, uint64_t size) {
  uint64_t n_extents = 0;
  for (const NcVar& v : vars) {
    uint64_t count = v.record ? numrecs : 1;
    if (v.bytes == 0 || count == 0) continue;
    uint64_t last = 0, end = 0;
    if (v.begin < header_end)
      return "variable '" + v.name + "' begins at byte " + std::to_string(v.begin) +
             ", inside the header (which ends at byte " + std::to_string(header_end) + ")";
    if (!mul(count - 1, recsize, last) || !add(v.begin, last, last) || !add(last, v.bytes, end) ||
        end > size)
      return "variable '" + v.name + "' at byte " + std::to_string(v.begin) +
             " lies beyond the end of the file (" + std::to_string(size) + " bytes)";
    n_extents += count;
    if (n_extents > kMaxExtents)
      return "more than " + std::to_string(kMaxExtents) + " records to map (variable '" + v.name +
             "' at byte " + std::to_string(v.begin) + ")";
  }
  return "";
}

// v as a Variable of the map: one extent, or one per record (check_data_in_file passed).
Variable map_variable(const NcVar& v, uint64_t numrecs, uint64_t recsize) {
  Variable x;
  x.name = v.name;
  x.dtype = v.type->dtype;
  x.elem_size = v.type->size;
  x.key = var_key(x.name, x.dtype, v.dimids.size());
  if (v.record) x.shape.push_back(numrecs);
  x.shape.insert(x.shape.end(), v.dims.begin(), v.dims.end());
  if (v.bytes == 0) return x;
  if (!v.record) {
    x.extents.push_back(
        VarExtent{v.begin, v.bytes, std::vector<uint64_t>(x.shape.size(), 0), x.shape, false});
    return x;
  }
  std::vector<uint64_t> shape = x.shape;
  shape[0] = 1;
  x.extents.reserve(numrecs);
  for (uint64_t r = 0; r < numrecs; ++r) {
    std::vector<uint64_t> start(x.shape.size(), 0);
    start[0] = r;
    x.extents.push_back(VarExtent{v.begin + r * recsize, v.bytes, std::move(start), shape, false});
  }
  return x;
}

}  // namespace

bool is_netcdf_classic(const uint8_t* d, uint64_t n) {
  return n >= 4 && d[0] == 'C' && d[1] == 'D' && d[2] == 'F' &&
         (d[3] == 1 || d[3] == 2 || d[3] == 5);
}

bool infer_netcdf_classic(const uint8_t* data, uint64_t size, VariableMap& out, std::string* why) {
  auto fail = [&](const std::string& what) {
    if (why) *why = "netCDF classic: " + what;
    return false;
  };
  if (!is_netcdf_classic(data, size)) return fail("no CDF magic and version 1, 2 or 5 at byte 0");
  const int version = data[3];
  const bool cdf5 = version == 5;
  Cursor c(data, size, version);
  c.skip_padded(4, "magic");

  // The header: numrecs, dim_list, gatt_list, var_list.
  uint64_t numrecs = 0;
  NcDims dims;
  std::vector<NcVar> vars;
  if (!c.count(numrecs, "numrecs") || !read_dimensions(c, dims) ||
      !skip_attributes(c, cdf5, "global attribute list") || !read_variables(c, cdf5, dims, vars))
    return fail(c.error());
  const uint64_t header_end = c.pos();
  const uint64_t streaming = c.count_size() == 8 ? ~uint64_t{0} : 0xFFFFFFFFu;

  NcRecords records;
  std::string bad = size_variables(vars, dims, records);
  if (bad.empty() && numrecs == streaming)
    bad = count_streamed_records(vars, records, size, numrecs);
  if (bad.empty()) bad = check_data_in_file(vars, numrecs, records.size, header_end, size);
  if (!bad.empty()) return fail(bad);

  VariableMap m;
  m.source = "netcdf";
  m.detail = "CDF-" + std::to_string(version);
  m.vars.reserve(vars.size());
  for (const NcVar& v : vars) m.vars.push_back(map_variable(v, numrecs, records.size));
  bad = check_variable_map(m, size);
  if (!bad.empty()) return fail(bad);
  out = std::move(m);
  return true;
}

}  // namespace ckptfwd::schema
