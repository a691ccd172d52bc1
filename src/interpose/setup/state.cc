#include "interpose/setup/state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "interpose/setup/cwd_cache.h"
#include "interpose/setup/cwd_filter.h"
#include "interpose/wrap/real.h"

namespace ckptfwd::interpose {

Settings g_settings;
CaptureSet g_capture;
FdTable g_fds;
std::atomic<pid_t> g_owner_pid{0};
CwdFilter g_cwd_filter;
__thread bool t_busy __attribute__((tls_model("initial-exec"))) = false;

namespace {
std::atomic<long> g_fallbacks{0};
std::atomic<bool> g_logged_unreachable{false};
std::atomic<bool> g_logged_staging{false};
}  // namespace

bool owner_process() { return getpid() == g_owner_pid.load(std::memory_order_relaxed); }

ErrnoKeeper::ErrnoKeeper() : saved_(errno) {}
ErrnoKeeper::~ErrnoKeeper() { errno = err_ ? err_ : saved_; }

bool resolve_path(int dirfd, const char* path, char* out) {
  if (!path || !*path) return false;
  if (path[0] == '/' || dirfd == AT_FDCWD) return normalize_path(path, nullptr, out, PATH_MAX);
  char link[32];
  char base[PATH_MAX];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
  ssize_t n = real::readlink()(link, base, sizeof(base) - 1);
  if (n <= 0) return false;
  base[n] = '\0';
  if (base[0] != '/') return false;  // not a directory in the file system tree
  return normalize_path(path, base, out, PATH_MAX);
}

namespace {
// If the captured path out names a symbolic link, replaces it with the link's target
// (normalised against the link's directory), up to 8 times. False if a target cannot be
// resolved. errno untouched.
bool follow_captured_links(char* out) {
  int saved = errno;
  bool ok = true;
  for (int hop = 0; hop < 8; ++hop) {
    struct stat st;
    if (real::lstat()(out, &st) != 0) {
      if (errno == ENOENT) t_real_path_absent = out;
      break;
    }
    if (!S_ISLNK(st.st_mode)) break;
    char target[PATH_MAX];
    ssize_t n = real::readlink()(out, target, sizeof(target) - 1);
    if (n <= 0) break;
    target[n] = '\0';
    char dir[PATH_MAX];
    strcpy(dir, out);
    char* slash = strrchr(dir, '/');  // out is absolute
    slash[slash == dir ? 1 : 0] = '\0';
    if (!normalize_path(target, dir, out, PATH_MAX)) {
      ok = false;
      break;
    }
    if (!g_capture.matches(out)) break;  // leads out of the capture: the real call decides
  }
  errno = saved;
  return ok;
}
}  // namespace

namespace {
// The cheap part of resolve_path for the common, already normal paths: 1 with the
// normalised absolute path in out (PATH_MAX), 0 when no glob can match it, -1 when it
// takes resolve_path to tell (a path to normalise, a relative path and no trusted copy of
// the working directory, a path relative to a directory fd whose end a glob could match).
// Gives the same answers as resolve_path + CaptureSet::matches: every check here is a
// necessary condition of a match, and a normal path is its own normalisation.
int quick_resolve(int dirfd, const char* path, char* out) {
  if (!path || !*path) return 0;  // resolve_path fails on them
  if (path[0] == '/') {
    size_t n = normal_abs_length(path);
    if (n == 0 || n >= PATH_MAX) return -1;
    if (!g_capture.may_match(path, n)) return 0;
    memcpy(out, path, n + 1);
    return 1;
  }
  size_t n = normal_rel_length(path);
  if (n == 0 || n >= PATH_MAX) return -1;
  // Relative to a directory fd: its path is known only from /proc (a readlink); the end
  // of the result is known now.
  if (dirfd != AT_FDCWD) return g_capture.may_end_with(path, n) ? -1 : 0;
  // Relative to the working directory: what the globs need of it is decided once per
  // directory change (cwd_filter.h); most relative paths are rejected by that alone.
  const unsigned now = cwd_generation();
  unsigned long long mask = 0;
  size_t dir_len = 0;
  const bool known = now != 0 && g_cwd_filter.get(now, mask, dir_len);
  if (known && !g_capture.may_match_relative(path, n, dir_len, mask)) return 0;
  unsigned copied = 0;
  size_t c = cwd_copy(out, &copied);
  if (c == 0) return -1;
  if (!known || copied != now) {
    mask = g_capture.below_mask(out, c);
    g_cwd_filter.put(copied, mask, c);
    if (!mask) return 0;
  }
  if (c > 1) out[c++] = '/';  // the root directory has its slash
  if (c + n >= PATH_MAX) return -1;
  memcpy(out + c, path, n + 1);
  return g_capture.may_match(out, c + n) ? 1 : 0;
}
}  // namespace

__thread const char* t_real_path_absent __attribute__((tls_model("initial-exec"))) = nullptr;

bool captured_path(int dirfd, const char* path, char* out, bool follow) {
  t_real_path_absent = nullptr;
  const int quick = quick_resolve(dirfd, path, out);  // touches no errno
  if (quick == 0) return false;
  const int saved = errno;  // resolve_path's readlink, fnmatch
  const bool hit = (quick > 0 || resolve_path(dirfd, path, out)) && g_capture.matches(out) &&
                   (!follow || (follow_captured_links(out) && g_capture.matches(out)));
  errno = saved;
  return hit;
}

int open_own_append(const char* path, mode_t mode) {
  int fd = real::open()(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return -1;
  struct stat st;
  if (real::fstat()(fd, &st) != 0 || st.st_uid != geteuid()) {
    real::close()(fd);
    errno = EPERM;
    return -1;
  }
  return fd;
}

namespace {
std::atomic<bool> g_logged_unusable_log{false};

void note_unusable_log(int err) {
  if (g_fds.get(2) || g_logged_unusable_log.exchange(true)) return;  // (as log_msg)
  char line[PATH_MAX + 256];
  int n = snprintf(line, sizeof(line),
                   "ckptfwd: warning: CKPTFWD_LOG=%s cannot be appended to (%s); logging to "
                   "stderr. Fix: create its directory, or set CKPTFWD_LOG to a writable file "
                   "of yours\n",
                   g_settings.log_path, strerror(err));
  if (n > 0) {
    ssize_t w = real::write()(2, line, std::min(static_cast<size_t>(n), sizeof(line) - 1));
    (void)w;
  }
}
}  // namespace

void log_msg(const char* fmt, ...) {
  int saved = errno;
  char buf[1536];
  int n = snprintf(buf, sizeof(buf), "ckptfwd: ");
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(buf + n, sizeof(buf) - static_cast<size_t>(n) - 1, fmt, ap);
  va_end(ap);
  if (m < 0) m = 0;
  size_t len = static_cast<size_t>(n) + static_cast<size_t>(m);
  if (len > sizeof(buf) - 2) len = sizeof(buf) - 2;
  buf[len++] = '\n';
  int fd = 2;
  if (g_settings.log_path[0]) fd = open_own_append(g_settings.log_path, 0644);
  if (fd < 0) {
    // A log file that cannot be used: the line goes to stderr instead of nowhere, and
    // says once why (the key, the file, the cause, the fix).
    note_unusable_log(errno);
    fd = 2;
  }
  // A stderr the application closed and whose number a captured file took: the line would
  // go into that file's staged bytes.
  if (fd == 2 && g_fds.get(2)) {
    errno = saved;
    return;
  }
  ssize_t w = real::write()(fd, buf, len);
  (void)w;
  if (fd != 2) real::close()(fd);
  errno = saved;
}

static char g_first_reason[320];

void note_fallback(const char* reason, const char* path) {
  long n = g_fallbacks.fetch_add(1) + 1;
  bool unreachable = strncmp(reason, "forwarder unreachable", 21) == 0;
  std::atomic<bool>& once = unreachable ? g_logged_unreachable : g_logged_staging;
  if (n == 1) snprintf(g_first_reason, sizeof(g_first_reason), "%s", reason);
  if (!once.exchange(true)) log_msg("%s; writing %s directly", reason, path);
}

long fallback_count() { return g_fallbacks.load(); }
void reset_fallbacks() { g_fallbacks.store(0); }
const char* first_fallback_reason() { return g_first_reason; }

}  // namespace ckptfwd::interpose
