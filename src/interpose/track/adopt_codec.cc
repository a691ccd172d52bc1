#include "interpose/track/adopt_codec.h"

#include <climits>
#include <cstdio>
#include <cstring>

namespace ckptfwd::interpose {

size_t format_adopt_head(char* out, size_t cap, int sock) {
  int n = snprintf(out, cap, "%d;", sock);
  return n > 0 && static_cast<size_t>(n) < cap ? static_cast<size_t>(n) : 0;
}

size_t format_adopt_record(char* out, size_t cap, const AdoptRecord& r) {
  int n = snprintf(out, cap, "%d,%llu,%lld,%o,%zu:", r.fd, r.vid, r.budget, r.mode, r.path_len);
  if (n <= 0) return 0;
  size_t len = static_cast<size_t>(n) + r.path_len + 1;
  if (len >= cap) return 0;
  memcpy(out + n, r.path, r.path_len);
  out[len - 1] = ';';
  out[len] = '\0';
  return len;
}

// Reads a decimal (optionally negative) number ending at sep.
static const char* read_num(const char* p, char sep, long long& v, int base = 10) {
  bool neg = *p == '-';
  if (neg) ++p;
  if (*p < '0' || *p > (base == 8 ? '7' : '9')) return nullptr;
  unsigned long long u = 0;
  while (*p >= '0' && *p <= (base == 8 ? '7' : '9')) {
    unsigned long long nu = u * static_cast<unsigned>(base) + static_cast<unsigned>(*p - '0');
    if (nu / static_cast<unsigned>(base) != u || nu > static_cast<unsigned long long>(LLONG_MAX))
      return nullptr;
    u = nu;
    ++p;
  }
  if (*p != sep) return nullptr;
  v = neg ? -static_cast<long long>(u) : static_cast<long long>(u);
  return p + 1;
}

const char* parse_adopt_head(const char* s, int& sock) {
  long long v = 0;
  const char* p = s ? read_num(s, ';', v) : nullptr;
  if (!p || v < 0 || v > INT_MAX) return nullptr;
  sock = static_cast<int>(v);
  return p;
}

const char* parse_adopt_record(const char* p, AdoptRecord& r) {
  long long fd, vid, budget, mode, len;
  if (!(p = read_num(p, ',', fd)) || !(p = read_num(p, ',', vid)) ||
      !(p = read_num(p, ',', budget)) || !(p = read_num(p, ',', mode, 8)) ||
      !(p = read_num(p, ':', len)))
    return nullptr;
  if (fd < 0 || fd > INT_MAX || vid <= 0 || mode > 07777 || len <= 0 || len >= PATH_MAX)
    return nullptr;
  if (strnlen(p, static_cast<size_t>(len) + 1) < static_cast<size_t>(len) + 1 || p[len] != ';')
    return nullptr;
  r.fd = static_cast<int>(fd);
  r.vid = static_cast<unsigned long long>(vid);
  r.budget = budget;
  r.mode = static_cast<unsigned>(mode);
  r.path = p;
  r.path_len = static_cast<size_t>(len);
  return p + len + 1;
}

}  // namespace ckptfwd::interpose
