#include "float_vars.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>

#include "common/config.h"
#include "schema/infer.h"
#include "store/container/variable_map.h"

namespace bench {
namespace {

// The shape of the concatenated pieces: the longest suffix of dimensions all pieces share
// is kept; what precedes it becomes one leading dimension. Pieces of equal shape stack
// along their first dimension (16 slabs of [nz][ny][nx] are [16 nz][ny][nx]); segmented
// rows of unequal counts give back the original field.
std::vector<size_t> merged_dims(const Merged& m, size_t elems) {
  std::vector<uint64_t> suffix = m.shapes.front();
  for (const auto& s : m.shapes) {
    size_t k = 0;
    while (k < suffix.size() && k < s.size() &&
           suffix[suffix.size() - 1 - k] == s[s.size() - 1 - k])
      ++k;
    suffix.erase(suffix.begin(), suffix.end() - k);
  }
  bool all_equal = std::all_of(m.shapes.begin(), m.shapes.end(),
                               [&](const auto& s) { return s.size() == suffix.size(); });
  if (all_equal && !suffix.empty()) suffix.erase(suffix.begin());
  size_t inner = 1;
  for (uint64_t d : suffix) inner *= d;
  std::vector<size_t> dims{elems / inner};
  dims.insert(dims.end(), suffix.begin(), suffix.end());
  // At most 3 dimensions (fpzip nx ny nz; zfp's 4-D blocks gain little): fold the leading.
  while (dims.size() > 3) {
    dims[1] *= dims[0];
    dims.erase(dims.begin());
  }
  return dims;
}

}  // namespace

bool load_float_vars(const char* tool, const std::vector<std::string>& files,
                     const std::string& schema, Inputs& in) {
  ckptfwd::Config cfg;
  cfg.schema = schema;
  ckptfwd::schema::Inferrer inferrer;
  std::string err;
  if (!inferrer.configure(cfg, &err)) {
    fprintf(stderr, "%s: %s\n", tool, err.c_str());
    return false;
  }
  std::map<std::string, size_t> index;
  for (const std::string& path : files) {
    std::ifstream f(path, std::ios::binary);
    Bytes b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (!f.good() && !f.eof()) {
      fprintf(stderr, "%s: cannot read %s\n", tool, path.c_str());
      return false;
    }
    in.total += b.size();
    std::string note;
    ckptfwd::VariableMap m = inferrer.infer(path, path, b.data(), b.size(), {}, &note);
    if (m.empty()) fprintf(stderr, "%s: %s: no variables (%s)\n", tool, path.c_str(), note.c_str());
    std::vector<bool> covered(b.size(), false);
    for (const ckptfwd::Variable& v : m.vars) {
      bool f32 = v.dtype == "F32LE" || v.dtype == "F32BE";
      bool f64 = v.dtype == "F64LE" || v.dtype == "F64BE";
      bool filtered = std::any_of(v.extents.begin(), v.extents.end(),
                                  [](const ckptfwd::VarExtent& x) { return x.filtered; });
      if ((!f32 && !f64) || filtered || v.extents.empty()) continue;
      auto [it, fresh] = index.emplace(v.key, in.vars.size());
      if (fresh) {
        in.vars.emplace_back();
        in.vars.back().key = v.key;
        in.vars.back().is_double = f64;
        in.vars.back().big_endian = v.dtype.ends_with("BE");
      }
      Merged& mv = in.vars[it->second];
      std::vector<uint64_t> shape;
      for (uint64_t d : v.shape)
        if (d != 1) shape.push_back(d);
      mv.shapes.push_back(shape);
      for (const ckptfwd::VarExtent& x : v.extents) {
        mv.raw.insert(mv.raw.end(), b.begin() + x.file_off, b.begin() + x.file_off + x.len);
        std::fill(covered.begin() + x.file_off, covered.begin() + x.file_off + x.len, true);
      }
    }
    for (size_t i = 0; i < b.size(); ++i)
      if (!covered[i]) in.other.push_back(b[i]);
  }
  for (Merged& mv : in.vars) mv.dims = merged_dims(mv, mv.raw.size() / (mv.is_double ? 8 : 4));
  return true;
}

void byteswap(uint8_t* p, size_t n, size_t width) {
  for (size_t i = 0; i + width <= n; i += width) std::reverse(p + i, p + i + width);
}

}  // namespace bench
