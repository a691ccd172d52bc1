#include "interpose/setup/capture.h"

#include <fnmatch.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstring>

#include "wire/session.h"

namespace ckptfwd::interpose {

bool CaptureSet::parse(const char* spec, const char* cwd_or_null) {
  count_ = 0;
  if (!spec) return true;
  size_t used = 0;
  bool complete = true;
  const char* p = spec;
  while (*p) {
    const char* e = strchr(p, ':');
    size_t len = e ? static_cast<size_t>(e - p) : strlen(p);
    if (len > 0) {
      char raw[PATH_MAX];
      char norm[PATH_MAX];
      if (len >= sizeof(raw) || count_ == kMaxPatterns) {
        complete = false;
      } else {
        memcpy(raw, p, len);
        raw[len] = '\0';
        // Lexical normalisation keeps glob characters; it only collapses "//", "." and "..".
        if (!normalize_path(raw, cwd_or_null, norm, sizeof(norm))) {
          complete = false;
        } else {
          size_t n = strlen(norm) + 1;
          if (used + n > sizeof(buf_)) {
            complete = false;
          } else {
            memcpy(buf_ + used, norm, n);
            patterns_[count_] = buf_ + used;
            prefix_len_[count_] = strcspn(norm, "*?[\\");
            const char* last = nullptr;
            for (const char* c = norm; *c; ++c)
              if (strchr("*?[]\\", *c)) last = c;
            suffix_at_[count_] = last ? static_cast<size_t>(last - norm) + 1 : 0;
            ++count_;
            used += n;
          }
        }
      }
    }
    if (!e) break;
    p = e + 1;
  }
  return complete;
}

void CaptureSet::set_exclusions(const char* stage_root, const char* store_dir) {
  stage_prefix_[0] = '\0';
  store_[0] = '\0';
  char norm[PATH_MAX];
  if (stage_root && *stage_root && normalize_path(stage_root, nullptr, norm, sizeof(norm))) {
    size_t n = strlen(norm);
    const char* suffix = (n == 1) ? "ckptfwd-" : "/ckptfwd-";  // root "/" has its slash
    if (n + strlen(suffix) < sizeof(stage_prefix_)) {
      memcpy(stage_prefix_, norm, n);
      strcpy(stage_prefix_ + n, suffix);
    }
  }
  if (store_dir && *store_dir && normalize_path(store_dir, nullptr, norm, sizeof(norm))) {
    strcpy(store_, norm);
  }
}

bool has_store_component(const char* path) {
  const char* p = path;
  while (*p) {
    while (*p == '/') ++p;
    const char* e = p;
    while (*e && *e != '/') ++e;
    if (e - p == 8 && memcmp(p, ".ckptfwd", 8) == 0) return true;
    p = e;
  }
  return false;
}

static bool under(const char* path, const char* dir) {
  size_t n = strlen(dir);
  if (n == 0 || strncmp(path, dir, n) != 0) return false;
  return path[n] == '\0' || path[n] == '/' || (n == 1 && dir[0] == '/');
}

// ROMIO keeps a shared file pointer in a hidden ".NAME.shfp.<id>" file beside the data file,
// updated under fcntl locks by every rank (also in read-only restarts). It is coordination
// state, not checkpoint data, and must be one file for all ranks of all nodes: leave it on
// the real file system.
bool is_romio_shared_fp(const char* path) {
  const char* base = strrchr(path, '/');
  base = base ? base + 1 : path;
  return base[0] == '.' && strstr(base, ".shfp.") != nullptr;
}

bool CaptureSet::excluded(const char* path) const {
  if (has_store_component(path) || is_romio_shared_fp(path)) return true;
  if (stage_prefix_[0] && strncmp(path, stage_prefix_, strlen(stage_prefix_)) == 0) return true;
  if (store_[0] && under(path, store_)) return true;
  return false;
}

namespace {
// memcmp(a, b, n) == 0 in 8-byte words, inline: the prefixes are short and most paths
// differ from them in their first word, where a call to memcmp cost more than the compare.
bool same_bytes(const char* a, const char* b, size_t n) {
  for (; n >= 8; a += 8, b += 8, n -= 8) {
    uint64_t x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    if (x != y) return false;
  }
  for (; n; ++a, ++b, --n)
    if (*a != *b) return false;
  return true;
}
}  // namespace

bool CaptureSet::may_match(const char* path, size_t len) const {
  for (size_t i = 0; i < count_; ++i)
    if (prefix_len_[i] <= len && same_bytes(path, patterns_[i], prefix_len_[i])) return true;
  return false;
}

namespace {
// Bytes of a path below the normalised absolute directory dir (dir_len bytes) that dir
// fixes: dir and a slash (the root's own slash for "/").
size_t known_below(size_t dir_len) { return dir_len == 1 ? 1 : dir_len + 1; }
}  // namespace

unsigned long long CaptureSet::below_mask(const char* dir, size_t len) const {
  static_assert(kMaxPatterns <= 64, "one bit a glob");
  const size_t known = known_below(len);
  unsigned long long mask = 0;
  for (size_t i = 0; i < count_; ++i) {
    const size_t n = std::min(prefix_len_[i], known);
    const size_t in_dir = std::min(n, len);
    if (!same_bytes(patterns_[i], dir, in_dir)) continue;
    if (n > len && patterns_[i][len] != '/') continue;  // the slash after dir
    mask |= 1ull << i;
  }
  return mask;
}

bool CaptureSet::may_match_relative(const char* rel, size_t rel_len, size_t dir_len,
                                    unsigned long long mask) const {
  const size_t known = known_below(dir_len);
  for (size_t i = 0; i < count_; ++i) {
    if (!(mask >> i & 1)) continue;
    const size_t beyond = prefix_len_[i] > known ? prefix_len_[i] - known : 0;
    if (beyond <= rel_len && same_bytes(rel, patterns_[i] + known, beyond)) return true;
  }
  return false;
}

bool CaptureSet::may_end_with(const char* tail, size_t len) const {
  for (size_t i = 0; i < count_; ++i) {
    const char* suffix = patterns_[i] + suffix_at_[i];
    size_t n = strlen(suffix);
    if (n > len || memcmp(tail + len - n, suffix, n) == 0) return true;
  }
  return false;
}

bool CaptureSet::matches(const char* path) const {
  if (count_ == 0 || path[0] != '/') return false;
  size_t len = strlen(path);
  bool hit = false;
  for (size_t i = 0; i < count_ && !hit; ++i)
    hit = prefix_len_[i] <= len && memcmp(path, patterns_[i], prefix_len_[i]) == 0 &&
          fnmatch(patterns_[i], path, 0) == 0;
  return hit && !excluded(path);
}

namespace {
// Length of the run of plain-name components starting at p (each non-empty, not "." nor
// "..", separated by single slashes, no trailing slash), or 0 if there is another kind.
size_t plain_components_length_exact(const char* p) {
  const char* c = p;
  for (;;) {
    const char* e = strchrnul(c, '/');
    size_t n = static_cast<size_t>(e - c);
    if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) return 0;
    if (!*e) return static_cast<size_t>(e - p);
    c = e + 1;
  }
}

#if defined(__SSE2__)
// The same answer, for the paths every uncaptured call passes: one scan of p in aligned
// 16-byte blocks (an aligned block never reaches into the next page, so reading past the
// terminator within its block is safe; the sanitizer cannot know that) that finds the
// terminator and every byte following a slash (or the start). None of those bytes being a
// slash, a dot or the terminator proves every component plain; a dot there may begin a
// plain name (".hidden"), so only then the exact walk decides. The walk alone cost one
// strchrnul call a component: about 15-20 ns of a 330 ns stat of a three-component path.
__attribute__((no_sanitize_address)) size_t plain_components_length(const char* p) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  const char* block = reinterpret_cast<const char*>(at & ~uintptr_t{15});
  const unsigned skip = static_cast<unsigned>(at & 15);
  const __m128i nul = _mm_setzero_si128();
  const __m128i slash = _mm_set1_epi8('/');
  const __m128i dot = _mm_set1_epi8('.');
  unsigned valid = 0xFFFFu << skip & 0xFFFFu;  // the first block's bytes from p on
  unsigned after_slash = 1u << skip;           // p begins a component
  for (;; block += 16) {
    const __m128i v = _mm_load_si128(reinterpret_cast<const __m128i*>(block));
    const unsigned z = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, nul))) & valid;
    const unsigned s = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, slash))) & valid;
    const unsigned d = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, dot))) & valid;
    after_slash |= (s << 1) & 0xFFFFu;
    unsigned suspect = after_slash & (s | d | z);
    if (z) {
      const unsigned end = static_cast<unsigned>(__builtin_ctz(z));
      suspect &= (2u << end) - 1;  // up to the terminator
      if (suspect) return plain_components_length_exact(p);
      return static_cast<size_t>(block + end - p);
    }
    if (suspect) return plain_components_length_exact(p);
    after_slash = s >> 15;  // a slash ending this block: the next one's first byte follows it
    valid = 0xFFFFu;
  }
}
#else
size_t plain_components_length(const char* p) { return plain_components_length_exact(p); }
#endif
}  // namespace

size_t normal_abs_length(const char* path) {
  if (path[0] != '/') return 0;
  if (path[1] == '\0') return 1;
  size_t n = plain_components_length(path + 1);
  return n ? n + 1 : 0;
}

size_t normal_rel_length(const char* path) {
  return path[0] == '/' ? 0 : plain_components_length(path);
}

bool CaptureSet::dir_may_hold(const char* dir) const {
  if (count_ == 0 || dir[0] != '/' || excluded(dir)) return false;
  for (size_t i = 0; i < count_; ++i) {
    const char* slash = strrchr(patterns_[i], '/');
    if (!slash) continue;
    char pdir[PATH_MAX];
    size_t n = static_cast<size_t>(slash - patterns_[i]);
    if (n == 0) n = 1;  // "/x*" lives in "/"
    memcpy(pdir, patterns_[i], n);
    pdir[n] = '\0';
    if (fnmatch(pdir, dir, 0) == 0) return true;
    // fnmatch without FNM_PATHNAME lets '*' span '/': "/ck/*" captures /ck/step_2/f too.
    // A '*' in the last component means files in any directory below the part before
    // it can match: "/ck/r*.bin" holds "/ck/r1/x.bin". Cut the pattern after that '*'.
    const char* star = strchr(slash, '*');
    if (star) {
      size_t k = static_cast<size_t>(star - patterns_[i]) + 1;
      memcpy(pdir, patterns_[i], k);
      pdir[k] = '\0';
      if (fnmatch(pdir, dir, 0) == 0) return true;
    }
  }
  return false;
}

unsigned long long path_hash(const char* path) {
  unsigned long long h = 1469598103934665603ull;
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(path); *p; ++p) {
    h ^= *p;
    h *= 1099511628211ull;
  }
  // Keep clear of 0 and of small numbers real file systems hand out.
  return h | (1ull << 62);
}

}  // namespace ckptfwd::interpose
