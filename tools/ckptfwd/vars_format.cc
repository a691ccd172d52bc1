#include "vars_format.h"

#include "restore_paths.h"
#include "store.h"

namespace ckptfwd::cli {

std::string fmt_shape(const std::vector<uint64_t>& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

void print_variable_map(FILE* out, const VariableMap& m, uint64_t file_size) {
  if (m.source.empty()) {
    fprintf(out, "source: none, stored agnostic (%s)\n", printable(m.detail).c_str());
    return;
  }
  fprintf(out, "source: %s (%s)\n", m.source.c_str(), printable(m.detail).c_str());
  size_t w = 3;
  for (const Variable& v : m.vars) w = std::max(w, printable(v.key).size());
  fprintf(out, "%-*s  %-7s  %-16s  %7s  %14s  %12s\n", static_cast<int>(w), "KEY", "DTYPE", "SHAPE",
          "EXTENTS", "BYTES", "OFFSET");
  for (const Variable& v : m.vars) {
    uint64_t bytes = 0;
    for (const VarExtent& e : v.extents) bytes += e.len;
    std::string first = v.extents.empty() ? "-" : std::to_string(v.extents.front().file_off);
    fprintf(out, "%-*s  %-7s  %-16s  %7zu  %14llu  %12s\n", static_cast<int>(w),
            printable(v.key).c_str(), v.dtype.c_str(), fmt_shape(v.shape).c_str(), v.extents.size(),
            static_cast<unsigned long long>(bytes), first.c_str());
  }
  auto res = residual_ranges(m, file_size);
  uint64_t rb = 0;
  for (const auto& [b, e] : res) rb += e - b;
  fprintf(out, "%zu variables, %s in variables, residual %s in %zu ranges (file %s)\n",
          m.vars.size(), human_bytes(mapped_bytes(m)).c_str(), human_bytes(rb).c_str(), res.size(),
          human_bytes(file_size).c_str());
}

}  // namespace ckptfwd::cli
