#include "interpose/capture.h"

#include <fnmatch.h>

#include <algorithm>
#include <cstring>

#include "common/session.h"

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

bool CaptureSet::may_match(const char* path, size_t len) const {
  for (size_t i = 0; i < count_; ++i)
    if (prefix_len_[i] <= len && memcmp(path, patterns_[i], prefix_len_[i]) == 0) return true;
  return false;
}

bool CaptureSet::may_match_below(const char* dir, size_t len) const {
  // Paths below dir begin with dir and a slash (the root's own slash for "/").
  const size_t known = len == 1 ? 1 : len + 1;
  for (size_t i = 0; i < count_; ++i) {
    const size_t n = std::min(prefix_len_[i], known);
    const size_t in_dir = std::min(n, len);
    if (memcmp(patterns_[i], dir, in_dir) != 0) continue;
    if (n > len && patterns_[i][len] != '/') continue;  // the slash after dir
    return true;
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
size_t plain_components_length(const char* p) {
  const char* c = p;
  for (;;) {
    const char* e = strchrnul(c, '/');
    size_t n = static_cast<size_t>(e - c);
    if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) return 0;
    if (!*e) return static_cast<size_t>(e - p);
    c = e + 1;
  }
}
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
