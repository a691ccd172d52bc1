#include "array_slice.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace ckptfwd::cli {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// An optional integer; false when text is neither empty nor a whole integer.
bool int_part(const std::string& text, bool* has, int64_t* v) {
  const std::string t = trim(text);
  *has = !t.empty();
  if (t.empty()) return true;
  char* end = nullptr;
  errno = 0;
  const long long x = strtoll(t.c_str(), &end, 10);
  if (errno || *end) return false;
  *v = x;
  return true;
}

}  // namespace

std::string parse_slice(const std::string& text, ArraySlice& out) {
  out = ArraySlice{};
  out.text = text;
  std::string t = trim(text);
  if (!t.empty() && t.front() == '[' && t.back() == ']') t = t.substr(1, t.size() - 2);
  if (trim(t).empty()) return "an empty slice (':' takes a whole dimension)";
  size_t from = 0;
  for (;;) {
    const size_t comma = t.find(',', from);
    const std::string part = t.substr(from, comma == std::string::npos ? comma : comma - from);
    const std::string where =
        "'" + trim(part) + "' (dimension " + std::to_string(out.dims.size()) + ")";
    SliceDim d;
    const size_t c1 = part.find(':');
    if (c1 == std::string::npos) {
      bool has = false;
      if (!int_part(part, &has, &d.start) || !has)
        return where + " is neither an index nor START:STOP[:STEP]";
      d.index = true;
    } else {
      const size_t c2 = part.find(':', c1 + 1);
      if (c2 != std::string::npos && part.find(':', c2 + 1) != std::string::npos)
        return where + " has more than two ':'";
      bool has_step = false;
      if (!int_part(part.substr(0, c1), &d.has_start, &d.start) ||
          !int_part(part.substr(c1 + 1, c2 == std::string::npos ? c2 : c2 - c1 - 1), &d.has_stop,
                    &d.stop) ||
          (c2 != std::string::npos && !int_part(part.substr(c2 + 1), &has_step, &d.step)))
        return where + ": START, STOP and STEP are integers";
      if (!has_step) d.step = 1;
      if (d.step == 0) return where + ": a step of 0";
    }
    out.dims.push_back(d);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return "";
}

std::string resolve_slice(const ArraySlice& s, const std::vector<uint64_t>& shape,
                          std::vector<uint64_t>& out_shape, std::vector<uint64_t>& offsets) {
  if (s.dims.size() > shape.size())
    return "--slice " + s.text + " names " + std::to_string(s.dims.size()) +
           " dimensions of an array of " + std::to_string(shape.size());
  const size_t nd = shape.size();
  std::vector<int64_t> first(nd), step(nd), count(nd);
  out_shape.clear();
  for (size_t k = 0; k < nd; ++k) {
    const int64_t n = static_cast<int64_t>(shape[k]);
    const SliceDim d = k < s.dims.size() ? s.dims[k] : SliceDim{false, false, false, 0, 0, 1};
    if (d.index) {
      const int64_t i = d.start < 0 ? d.start + n : d.start;
      if (i < 0 || i >= n)
        return "--slice " + s.text + ": index " + std::to_string(d.start) +
               " is outside dimension " + std::to_string(k) + " of size " + std::to_string(n);
      first[k] = i, step[k] = 1, count[k] = 1;
      continue;
    }
    // numpy's slice.indices(n)
    int64_t a, b;
    if (d.step > 0) {
      a = !d.has_start ? 0 : d.start < 0 ? std::max<int64_t>(d.start + n, 0) : std::min(d.start, n);
      b = !d.has_stop ? n : d.stop < 0 ? std::max<int64_t>(d.stop + n, 0) : std::min(d.stop, n);
      count[k] = b > a ? (b - a + d.step - 1) / d.step : 0;
    } else {
      a = !d.has_start  ? n - 1
          : d.start < 0 ? std::max<int64_t>(d.start + n, -1)
                        : std::min(d.start, n - 1);
      b = !d.has_stop  ? -1
          : d.stop < 0 ? std::max<int64_t>(d.stop + n, -1)
                       : std::min(d.stop, n - 1);
      count[k] = a > b ? (a - b - d.step - 1) / -d.step : 0;
    }
    first[k] = a, step[k] = d.step;
    out_shape.push_back(static_cast<uint64_t>(count[k]));
  }
  uint64_t total = 1;
  for (size_t k = 0; k < nd; ++k) total *= static_cast<uint64_t>(count[k]);
  offsets.clear();
  offsets.reserve(total);
  if (total == 0) return "";
  std::vector<uint64_t> stride(nd, 1);
  for (size_t k = nd; k-- > 1;) stride[k - 1] = stride[k] * shape[k];
  std::vector<int64_t> i(nd, 0);
  for (;;) {
    uint64_t off = 0;
    for (size_t k = 0; k < nd; ++k)
      off += static_cast<uint64_t>(first[k] + i[k] * step[k]) * stride[k];
    offsets.push_back(off);
    size_t k = nd;
    while (k > 0 && ++i[k - 1] == count[k - 1]) i[--k] = 0;
    if (k == 0) break;
  }
  return "";
}

}  // namespace ckptfwd::cli
