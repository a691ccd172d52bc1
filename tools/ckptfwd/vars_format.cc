#include "vars_format.h"

#include <algorithm>

#include "restore_paths.h"
#include "store.h"

namespace ckptfwd::cli {

std::string fmt_shape(const std::vector<uint64_t>& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

namespace {
// "100,300,500,... (12 extents)": the first few extent offsets.
std::string offsets_text(const Variable& v) {
  if (v.extents.empty()) return "-";
  const size_t kShown = 4;
  std::string o;
  for (size_t i = 0; i < v.extents.size() && i < kShown; ++i)
    o += (i ? "," : "") + std::to_string(v.extents[i].file_off);
  if (v.extents.size() > kShown) o += ",... (" + std::to_string(v.extents.size()) + " extents)";
  return o;
}
}  // namespace

void print_variable_map(FILE* out, const VariableMap& m, uint64_t file_size) {
  if (m.source.empty()) {
    fprintf(out, "source: none, stored agnostic (%s)\n", printable(m.detail).c_str());
    return;
  }
  fprintf(out, "source: %s (%s)\n", m.source.c_str(), printable(m.detail).c_str());
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "KEY", "DTYPE", "SHAPE", "OFFSET", "BYTES"}};
  for (const Variable& v : m.vars) {
    uint64_t bytes = 0;
    for (const VarExtent& e : v.extents) bytes += e.len;
    std::string shape = fmt_shape(v.shape);
    if (!v.global_shape.empty()) {
      shape += " at ";
      for (size_t d = 0; d < v.global_start.size(); ++d)
        shape += (d ? "," : "") + std::to_string(v.global_start[d]);
      shape += " in " + fmt_shape(v.global_shape);
    }
    rows.push_back({printable(v.name), printable(v.key), v.dtype, shape, offsets_text(v),
                    std::to_string(bytes)});
  }
  std::vector<size_t> w(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  for (const auto& r : rows) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      line += (i ? "  " : "") + r[i];
      if (i + 1 < r.size()) line += std::string(w[i] - r[i].size(), ' ');
    }
    fprintf(out, "%s\n", line.c_str());
  }
  auto res = residual_ranges(m, file_size);
  uint64_t rb = 0;
  for (const auto& [b, e] : res) rb += e - b;
  fprintf(out, "%zu variables, %s in variables, residual %s in %zu ranges (file %s)", m.vars.size(),
          human_bytes(mapped_bytes(m)).c_str(), human_bytes(rb).c_str(), res.size(),
          human_bytes(file_size).c_str());
  const size_t kRangesShown = 8;
  for (size_t i = 0; i < res.size() && i < kRangesShown; ++i)
    fprintf(out, "%s[%llu, %llu)", i ? " " : ": ", static_cast<unsigned long long>(res[i].first),
            static_cast<unsigned long long>(res[i].second));
  fprintf(out, "%s\n", res.size() > kRangesShown ? " ..." : "");
}

}  // namespace ckptfwd::cli
