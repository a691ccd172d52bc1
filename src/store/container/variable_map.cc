#include "store/container/variable_map.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "base/dtype.h"
#include "base/le_codec.h"

namespace ckptfwd {

namespace {

// HDF5 allows 32 dimensions, netCDF 1024; no real checkpoint comes near this, and it keeps
// a hostile rank from making a decoder allocate much.
constexpr uint32_t kMaxRank = 64;

}  // namespace

std::string var_class(size_t rank) {
  return rank == 0 ? "Scalar" : "Array" + std::to_string(rank) + "D";
}

std::string var_key(const std::string& name, const std::string& dtype, size_t rank) {
  size_t b = name.find_first_not_of('/');
  std::string base = b == std::string::npos ? std::string() : name.substr(b);
  return base + "_" + dtype + "_" + var_class(rank);
}

std::string grouped_key(const std::string& key, size_t group) {
  return group ? key + "@g" + std::to_string(group) : key;
}

std::string ungrouped_key(const std::string& key) {
  size_t at = key.rfind("@g");
  if (at == std::string::npos || at + 2 == key.size()) return key;
  for (size_t i = at + 2; i < key.size(); ++i)
    if (key[i] < '0' || key[i] > '9') return key;
  return key.substr(0, at);
}

uint32_t dtype_name_size(const std::string& d) {
  std::optional<DtypeInfo> t = dtype_lookup(d);
  return t ? t->size : 0;
}

std::string check_variable_map(const VariableMap& m, uint64_t file_size) {
  struct Piece {
    uint64_t off, len;
    size_t var;
  };
  std::vector<Piece> all;
  for (size_t v = 0; v < m.vars.size(); ++v) {
    const Variable& x = m.vars[v];
    std::string who = "variable '" + x.name + "'";
    if (x.key.empty()) return who + " has no key";
    uint32_t es = dtype_name_size(x.dtype);
    if (es == 0) return who + " has an unknown dtype '" + x.dtype + "'";
    if (es != x.elem_size) return who + ": element size disagrees with dtype " + x.dtype;
    if (x.shape.size() > kMaxRank) return who + " has too many dimensions";
    if (std::string why = bad_placement(x); !why.empty()) return who + ": " + why;
    for (const VarExtent& e : x.extents) {
      std::string at = who + " extent at " + std::to_string(e.file_off);
      if (e.len == 0) return at + " is empty";
      if (e.len > file_size || e.file_off > file_size - e.len) return at + " lies beyond the file";
      if (e.start.size() != x.shape.size() || e.shape.size() != x.shape.size())
        return at + " has a rank other than its variable's";
      if (!e.filtered) {
        // product(shape) * elem_size == len, without overflow.
        uint64_t n = es;
        for (uint64_t d : e.shape) {
          if (d != 0 && n > e.len / d) return at + ": shape holds more bytes than the extent";
          n *= d;
        }
        if (n != e.len) return at + ": shape and length disagree";
      }
      all.push_back({e.file_off, e.len, v});
    }
  }
  std::sort(all.begin(), all.end(), [](const Piece& a, const Piece& b) { return a.off < b.off; });
  for (size_t i = 1; i < all.size(); ++i)
    if (all[i].off < all[i - 1].off + all[i - 1].len)
      return "variables '" + m.vars[all[i - 1].var].name + "' and '" + m.vars[all[i].var].name +
             "' overlap at byte " + std::to_string(all[i].off);
  return "";
}

std::string bad_placement(const Variable& v) {
  if (v.global_shape.empty() && v.global_start.empty()) return "";
  if (v.global_shape.size() != v.shape.size() || v.global_start.size() != v.shape.size())
    return "a placement of another rank than the variable's (" +
           std::to_string(v.global_shape.size()) + " dimensions, the variable " +
           std::to_string(v.shape.size()) + ")";
  if (v.shape.empty()) return "a placement of a scalar";
  for (size_t d = 0; d < v.shape.size(); ++d) {
    const uint64_t g = v.global_shape[d], s = v.global_start[d], n = v.shape[d];
    if (s > g || n > g - s)
      return "global start " + std::to_string(s) + " + " + std::to_string(n) +
             " elements exceed the global size " + std::to_string(g) + " in dimension " +
             std::to_string(d);
  }
  return "";
}

uint64_t mapped_bytes(const VariableMap& m) {
  uint64_t n = 0;
  for (const Variable& v : m.vars)
    for (const VarExtent& e : v.extents) n += e.len;
  return n;
}

std::vector<std::pair<uint64_t, uint64_t>> residual_ranges(const VariableMap& m,
                                                           uint64_t file_size) {
  std::vector<std::pair<uint64_t, uint64_t>> used;
  for (const Variable& v : m.vars)
    for (const VarExtent& e : v.extents) used.push_back({e.file_off, e.file_off + e.len});
  std::sort(used.begin(), used.end());
  std::vector<std::pair<uint64_t, uint64_t>> out;
  uint64_t at = 0;
  for (const auto& [b, e] : used) {
    if (b > at) out.push_back({at, std::min(b, file_size)});
    at = std::max(at, e);
  }
  if (at < file_size) out.push_back({at, file_size});
  return out;
}

void encode_variable_map(const VariableMap& m, std::vector<uint8_t>& out) {
  LeEncoder x;
  x.buf.swap(out);
  x.str(m.source);
  x.str(m.detail);
  x.u32(static_cast<uint32_t>(m.vars.size()));
  for (const Variable& v : m.vars) {
    x.str(v.key);
    x.str(v.name);
    x.str(v.dtype);
    x.u32(v.elem_size);
    x.u32(static_cast<uint32_t>(v.shape.size()));
    for (uint64_t d : v.shape) x.u64(d);
    x.u32(static_cast<uint32_t>(v.extents.size()));
    for (const VarExtent& e : v.extents) {
      x.u64(e.file_off);
      x.u64(e.len);
      x.u8(e.filtered ? 1 : 0);
      for (size_t k = 0; k < v.shape.size(); ++k) x.u64(k < e.start.size() ? e.start[k] : 0);
      for (size_t k = 0; k < v.shape.size(); ++k) x.u64(k < e.shape.size() ? e.shape[k] : 0);
    }
  }
  out.swap(x.buf);
}

bool decode_variable_map(const uint8_t* p, size_t n, size_t* pos, uint64_t file_size,
                         VariableMap& out, std::string* err) {
  auto fail = [&](const std::string& why) {
    if (err) *err = "variable map: " + why;
    return false;
  };
  LeDecoder r(p, n, *pos);
  VariableMap m;
  m.source = r.str();
  m.detail = r.str();
  uint32_t nv = r.u32();
  constexpr size_t kVarMin = 4 * 3 + 4 + 4 + 4;
  if (!r.ok() || nv > r.left() / kVarMin) return fail("variable count out of range");
  m.vars.resize(nv);
  for (uint32_t i = 0; i < nv; ++i) {
    Variable& v = m.vars[i];
    v.key = r.str();
    v.name = r.str();
    v.dtype = r.str();
    v.elem_size = r.u32();
    uint32_t rank = r.u32();
    if (!r.ok() || rank > kMaxRank || rank > r.left() / 8)
      return fail("rank of variable " + std::to_string(i) + " out of range");
    v.shape.resize(rank);
    for (uint64_t& d : v.shape) d = r.u64();
    uint32_t ne = r.u32();
    const size_t ext_bytes = 8 + 8 + 1 + 16 * static_cast<size_t>(rank);
    if (!r.ok() || ne > r.left() / ext_bytes)
      return fail("extent count of variable " + std::to_string(i) + " out of range");
    v.extents.resize(ne);
    for (VarExtent& e : v.extents) {
      e.file_off = r.u64();
      e.len = r.u64();
      uint8_t flags = r.u8();
      if (flags > 1) return fail("unknown extent flags in variable '" + v.name + "'");
      e.filtered = flags & 1;
      e.start.resize(rank);
      e.shape.resize(rank);
      for (uint64_t& d : e.start) d = r.u64();
      for (uint64_t& d : e.shape) d = r.u64();
    }
    if (!r.ok()) return fail("truncated");
  }
  if (!r.ok()) return fail("truncated");
  std::string why = check_variable_map(m, file_size);
  if (!why.empty()) return fail(why);
  *pos = r.pos();
  out = std::move(m);
  return true;
}

namespace {
bool too_fine(uint64_t extents, uint64_t bytes) {
  return extents > kFineMapExtents && bytes / extents < kMinMeanExtent;
}
std::string fine_text(uint64_t extents, uint64_t bytes) {
  return std::to_string(extents) + " extents of " + std::to_string(bytes / extents) +
         " bytes on average";
}
}  // namespace

std::string drop_too_fine_variables(VariableMap& m) {
  std::string dropped;
  size_t kept = 0, n = 0;
  for (Variable& v : m.vars) {
    uint64_t bytes = 0;
    for (const VarExtent& e : v.extents) bytes += e.len;
    if (too_fine(v.extents.size(), bytes)) {
      if (++n <= 3)
        dropped +=
            (dropped.empty() ? "" : ", ") + v.name + ": " + fine_text(v.extents.size(), bytes);
      continue;
    }
    if (&m.vars[kept] != &v) m.vars[kept] = std::move(v);
    ++kept;
  }
  m.vars.resize(kept);
  if (n == 0) return "";
  return std::to_string(n) + " variable" + (n == 1 ? "" : "s") +
         " too fine to store by variable (" + dropped + (n > 3 ? ", ..." : "") + "; at least " +
         std::to_string(kMinMeanExtent) + " bytes per extent wanted)";
}

std::string keep_coarse_variables(VariableMap& m, bool* use_map) {
  const std::string fine = drop_too_fine_variables(m);
  const std::string whole = m.vars.empty() ? "" : variable_map_too_fine(m);
  *use_map = (fine.empty() || !m.vars.empty()) && whole.empty();
  return whole.empty() ? fine : whole;
}

std::string variable_map_too_fine(const VariableMap& m) {
  uint64_t n = 0, bytes = 0;
  for (const Variable& v : m.vars)
    for (const VarExtent& e : v.extents) {
      ++n;
      bytes += e.len;
    }
  if (!too_fine(n, bytes)) return "";
  return fine_text(n, bytes) + " (at least " + std::to_string(kMinMeanExtent) +
         " wanted): too fine to store the file by variable";
}

}  // namespace ckptfwd
