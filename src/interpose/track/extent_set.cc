#include "interpose/track/extent_set.h"

#include <cstdlib>
#include <cstring>

namespace ckptfwd::interpose {

bool extent_set_add(ExtentSet& s, uint64_t begin, uint64_t end) {
  if (end <= begin) return true;
  // Fast path: at or after the end of the last interval (sequential writes).
  if (s.n && begin <= s.iv[s.n - 1][1] && begin >= s.iv[s.n - 1][0]) {
    if (end > s.iv[s.n - 1][1]) s.iv[s.n - 1][1] = end;
    return true;
  }
  // lo: first interval whose end >= begin (it may touch or overlap the new one).
  size_t lo = 0, hi = s.n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s.iv[mid][1] < begin)
      lo = mid + 1;
    else
      hi = mid;
  }
  // last: one past the last interval whose begin <= end.
  size_t last = lo;
  while (last < s.n && s.iv[last][0] <= end) ++last;
  if (last > lo) {  // merge [lo, last) with the new interval into slot lo
    uint64_t b = s.iv[lo][0] < begin ? s.iv[lo][0] : begin;
    uint64_t e = s.iv[last - 1][1] > end ? s.iv[last - 1][1] : end;
    s.iv[lo][0] = b;
    s.iv[lo][1] = e;
    size_t gone = last - lo - 1;
    if (gone) {
      memmove(s.iv + lo + 1, s.iv + last, (s.n - last) * sizeof(s.iv[0]));
      s.n -= gone;
    }
    return true;
  }
  if (s.n == s.cap) {
    size_t cap = s.cap ? s.cap * 2 : 64;
    void* p = realloc(s.iv, cap * sizeof(s.iv[0]));
    if (!p) return false;
    s.iv = static_cast<uint64_t(*)[2]>(p);
    s.cap = cap;
  }
  memmove(s.iv + lo + 1, s.iv + lo, (s.n - lo) * sizeof(s.iv[0]));
  s.iv[lo][0] = begin;
  s.iv[lo][1] = end;
  ++s.n;
  return true;
}

void extent_set_clear(ExtentSet& s) { s.n = 0; }

void extent_set_free(ExtentSet& s) {
  free(s.iv);
  s.iv = nullptr;
  s.n = s.cap = 0;
}

}  // namespace ckptfwd::interpose
