#include "var_values.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace ckptfwd::cli {
namespace {

uint64_t load(const uint8_t* p, uint32_t size, bool big_endian) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < size; ++i) {
    const uint32_t from = big_endian ? size - 1 - i : i;
    v |= uint64_t{p[from]} << (8 * i);
  }
  return v;
}

int64_t sign_extend(uint64_t v, uint32_t size) {
  if (size == 8) return static_cast<int64_t>(v);
  const uint64_t sign = uint64_t{1} << (8 * size - 1);
  return static_cast<int64_t>((v ^ sign) - sign);
}

}  // namespace

NumericDtype numeric_dtype(const std::string& name) {
  NumericDtype d;
  const std::optional<DtypeInfo> info = dtype_lookup(name);
  // CHAR reads as an unsigned byte, but it is text.
  if (!info || info->kind == DtypeKind::kBytes || name == "CHAR") return d;
  if (info->kind == DtypeKind::kFloat && info->size != 4 && info->size != 8) return d;
  d.ok = true;
  d.info = *info;
  return d;
}

double NumericDtype::value(const uint8_t* p, uint64_t k) const {
  const uint64_t bits = load(p + k * info.size, info.size, info.big_endian);
  switch (info.kind) {
    case DtypeKind::kFloat:
      if (info.size == 4) {
        const uint32_t b32 = static_cast<uint32_t>(bits);
        float f;
        memcpy(&f, &b32, 4);
        return f;
      } else {
        double d;
        memcpy(&d, &bits, 8);
        return d;
      }
    case DtypeKind::kSigned:
      return static_cast<double>(sign_extend(bits, info.size));
    default:
      return static_cast<double>(bits);
  }
}

std::string NumericDtype::text(const uint8_t* p, uint64_t k) const {
  char buf[48];
  const uint64_t bits = load(p + k * info.size, info.size, info.big_endian);
  if (info.kind == DtypeKind::kSigned)
    snprintf(buf, sizeof(buf), "%" PRId64, sign_extend(bits, info.size));
  else if (info.kind == DtypeKind::kUnsigned)
    snprintf(buf, sizeof(buf), "%" PRIu64, bits);
  else
    snprintf(buf, sizeof(buf), info.size == 4 ? "%.9g" : "%.17g", value(p, k));
  return buf;
}

void ValueStats::add(double v) {
  ++count;
  if (std::isnan(v)) {
    ++nans;
    return;
  }
  if (count - nans == 1) {
    min = max = v;
  } else {
    min = std::min(min, v);
    max = std::max(max, v);
  }
  sum += v;
}

void ValueStats::merge(const ValueStats& o) {
  if (o.count == o.nans) {
    count += o.count;
    nans += o.nans;
    return;
  }
  if (count == nans) {
    min = o.min;
    max = o.max;
  } else {
    min = std::min(min, o.min);
    max = std::max(max, o.max);
  }
  count += o.count;
  nans += o.nans;
  sum += o.sum;
}

}  // namespace ckptfwd::cli
