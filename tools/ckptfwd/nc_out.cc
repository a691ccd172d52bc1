#include "nc_out.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "base/dtype.h"

namespace ckptfwd::cli {

namespace {

enum NcType : uint32_t {
  kByte = 1,
  kChar = 2,
  kShort = 3,
  kInt = 4,
  kFloat = 5,
  kDouble = 6,
  kUbyte = 7,
  kUshort = 8,
  kUint = 9,
  kInt64 = 10,
  kUint64 = 11
};
constexpr uint32_t kDimensionTag = 0x0A, kVariableTag = 0x0B, kAttributeTag = 0x0C;

// The nc_type of a numeric dtype, 0 for others.
uint32_t nc_type_of(const DtypeInfo& d) {
  if (d.kind == DtypeKind::kFloat) return d.size == 4 ? kFloat : d.size == 8 ? kDouble : 0u;
  const bool s = d.kind == DtypeKind::kSigned;
  if (!s && d.kind != DtypeKind::kUnsigned) return 0;
  switch (d.size) {
    case 1:
      return s ? kByte : kUbyte;
    case 2:
      return s ? kShort : kUshort;
    case 4:
      return s ? kInt : kUint;
    case 8:
      return s ? kInt64 : kUint64;
  }
  return 0;
}

// Big-endian header encoder (CDF-5: counts and sizes are 64-bit).
struct Enc {
  std::vector<uint8_t> b;
  void u32(uint32_t v) {
    for (int i = 3; i >= 0; --i) b.push_back(uint8_t(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 7; i >= 0; --i) b.push_back(uint8_t(v >> (8 * i)));
  }
  void pad() {
    while (b.size() % 4) b.push_back(0);
  }
  void name(const std::string& s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    pad();
  }
  void attrs(const Json& a) {
    if (!a.is_object() || a.empty()) {
      u32(0);
      u64(0);
      return;
    }
    size_t n = 0;
    for (const auto& [k, v] : a.items()) n += !v.is_null();
    u32(kAttributeTag);
    u64(n);
    for (const auto& [k, v] : a.items()) {
      if (v.is_null()) continue;
      name(nc_name(k));
      if (v.is_string() || (v.is_array() && !v.empty() && v[0].is_string())) {
        std::string text;
        if (v.is_string()) text = v.get<std::string>();
        for (size_t i = 0; v.is_array() && i < v.size(); ++i)
          text += (i ? "\n" : "") + (v[i].is_string() ? v[i].get<std::string>() : v[i].dump());
        u32(kChar);
        u64(text.size());
        b.insert(b.end(), text.begin(), text.end());
      } else if (v.is_number_float()) {
        u32(kDouble);
        u64(1);
        const double d = v.get<double>();
        uint64_t bits;
        memcpy(&bits, &d, 8);
        u64(bits);
      } else {
        std::vector<int64_t> ints;
        if (v.is_boolean()) ints.push_back(v.get<bool>());
        if (v.is_number_integer()) ints.push_back(v.get<int64_t>());
        for (const Json& x : v.is_array() ? v : Json::array())
          ints.push_back(x.is_number_integer() ? x.get<int64_t>() : 0);
        u32(kInt64);
        u64(ints.size());
        for (int64_t x : ints) u64(static_cast<uint64_t>(x));
      }
      pad();
    }
  }
};

}  // namespace

std::string nc_name(const std::string& s) {
  std::string out;
  for (char c : s)
    out += (isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' || c == '-')
               ? c
               : '_';
  if (out.empty() || !(isalpha(static_cast<unsigned char>(out[0])) || out[0] == '_'))
    out = "_" + out;
  return out;
}

bool write_nc(const std::string& out, const std::vector<NcVar>& vars, std::string* err) {
  struct Laid {
    uint32_t type;
    uint32_t elem;
    bool swap;
    uint64_t bytes;
  };
  std::vector<Laid> laid;
  uint64_t ndims = 0;
  for (const NcVar& v : vars) {
    const std::optional<DtypeInfo> d = dtype_lookup(v.dtype);
    const uint32_t t = d ? nc_type_of(*d) : 0;
    if (!t) {
      *err = v.name + ": " + v.dtype + " elements have no netCDF number type (export to .npy)";
      return false;
    }
    uint64_t n = d->size;
    for (uint64_t x : v.shape) n *= x;
    laid.push_back({t, d->size, d->size > 1 && !d->big_endian, n});
    ndims += v.shape.size();
  }
  // The header twice: once to learn its size, then with the data offsets filled in.
  auto header = [&](const std::vector<uint64_t>& begins) {
    Enc e;
    e.b = {'C', 'D', 'F', 5};
    e.u64(0);  // numrecs
    if (ndims == 0) {
      e.u32(0);
      e.u64(0);
    } else {
      e.u32(kDimensionTag);
      e.u64(ndims);
      for (const NcVar& v : vars)
        for (size_t k = 0; k < v.shape.size(); ++k) {
          e.name(nc_name(v.name) + "_d" + std::to_string(k));
          e.u64(v.shape[k]);
        }
    }
    e.attrs(Json::object());  // no global attributes: each variable carries its own
    e.u32(vars.empty() ? 0 : kVariableTag);
    e.u64(vars.size());
    uint64_t dim = 0;
    for (size_t i = 0; i < vars.size(); ++i) {
      e.name(nc_name(vars[i].name));
      e.u64(vars[i].shape.size());
      for (size_t k = 0; k < vars[i].shape.size(); ++k) e.u64(dim++);
      e.attrs(vars[i].attrs);
      e.u32(laid[i].type);
      e.u64((laid[i].bytes + 3) / 4 * 4);
      e.u64(begins[i]);
    }
    return e.b;
  };
  std::vector<uint64_t> begins(vars.size(), 0);
  uint64_t at = header(begins).size();
  for (size_t i = 0; i < vars.size(); ++i) {
    begins[i] = at;
    at += (laid[i].bytes + 3) / 4 * 4;
  }
  const std::vector<uint8_t> head = header(begins);
  std::string tmp = out + ".tmp.XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) {
    *err = "cannot create " + tmp + ": " + strerror(errno);
    return false;
  }
  (void)fchmod(fd, 0644);
  bool ok = write(fd, head.data(), head.size()) == static_cast<ssize_t>(head.size());
  std::vector<uint8_t> buf;
  for (size_t i = 0; ok && i < vars.size(); ++i) {
    const Laid& l = laid[i];
    for (uint64_t off = 0; ok && off < l.bytes;) {
      const uint64_t k = std::min<uint64_t>(l.bytes - off, uint64_t{1} << 22);
      buf.assign(vars[i].data + off, vars[i].data + off + k);
      if (l.swap)
        for (uint64_t e = 0; e + l.elem <= k; e += l.elem)
          std::reverse(buf.begin() + e, buf.begin() + e + l.elem);
      ok = write(fd, buf.data(), k) == static_cast<ssize_t>(k);
      off += k;
    }
    static const uint8_t zeros[4] = {};
    const size_t pad = (4 - l.bytes % 4) % 4;
    ok = ok && write(fd, zeros, pad) == static_cast<ssize_t>(pad);
  }
  ok = ok && fsync(fd) == 0;
  if (!ok) *err = "cannot write " + tmp + ": " + strerror(errno);
  close(fd);
  if (ok && rename(tmp.c_str(), out.c_str()) != 0) {
    *err = "cannot rename " + tmp + " to " + out + ": " + strerror(errno);
    ok = false;
  }
  if (!ok) unlink(tmp.c_str());
  return ok;
}

}  // namespace ckptfwd::cli
