// open/openat/creat and their 64-bit and fortified (__open_2) twins. One core decides;
// a macro stamps out the entry points.
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>

#include "interpose/setup/open_flags.h"
#include "interpose/setup/state.h"
#include "interpose/track/versions.h"
#include "interpose/wrap/captured_stat.h"
#include "interpose/wrap/real.h"

namespace ckptfwd::interpose {
namespace {

constexpr int kPassThrough = -2;

// O_DIRECTORY and O_PATH opens capture nothing, but a captured file exists only through
// the library, so they must find it as the regular file it is: O_DIRECTORY fails with
// ENOTDIR (cp 9.x takes ENOENT there for "the destination does not exist" and then
// creates it with O_EXCL, which fails with EEXIST), O_PATH gets a path-only fd of the
// file's newest bytes (staged version or read view). Returns as open_core.
int open_path_only(int dirfd, const char* path, int flags) {
  int saved = errno;
  char norm[PATH_MAX];
  struct stat st;
  int h = describe_captured(dirfd, path, (flags & O_NOFOLLOW) ? AT_SYMLINK_NOFOLLOW : 0, &st, norm);
  if (h <= 0) {
    if (h == 0) errno = saved;
    return h == 0 ? kPassThrough : -1;
  }
  if (flags & O_DIRECTORY) {
    errno = ENOTDIR;
    return -1;
  }
  Busy busy;
  OpenReply r;
  request_open(norm, O_RDONLY, 0, r);
  h = take_reply(r.status, r.err, saved);
  if (h < 0) return -1;
  if (h == 0 || r.vid != 0) {
    if (r.vid) send_abandon(r.vid, norm);
    errno = saved;
    return kPassThrough;
  }
  // O_NOFOLLOW: a staged name is a plain file of our session dir (interpose/setup/trust.h).
  int fd = real::open()(r.staged, flags | O_NOFOLLOW);
  if (fd >= 0) errno = saved;
  return fd;
}

// fd of the staged file, -1 with errno, or kPassThrough (do the real call).
int open_core(int dirfd, const char* path, int flags, mode_t mode) {
  if (!intercepting()) return kPassThrough;
  if (!open_is_capturable(flags)) return open_path_only(dirfd, path, flags);
  char norm[PATH_MAX];
  if (!captured_path(dirfd, path, norm, !(flags & O_NOFOLLOW))) return kPassThrough;
  int saved = errno;
  Busy busy;
  OpenReply r;
  int fd = open_staged(norm, flags, mode, r, true, -1, [flags](const char* staged) {
    return real::open()(staged, staged_open_flags(flags) | O_NOFOLLOW);
  });
  int h = take_reply(r.status, r.err, saved);
  if (h <= 0) return h < 0 ? -1 : kPassThrough;
  if (fd < 0) {
    if (r.vid == 0) return -1;  // read view vanished: report it like the open would
    if (!send_abandon(r.vid, norm)) {
      errno = EIO;
      return -1;
    }
    note_fallback("staged file could not be opened", norm);
    errno = saved;
    return kPassThrough;
  }
  if (!track_fd(fd, r, norm, effective_mode(flags, mode))) {
    real::close()(fd);
    errno = saved;
    return kPassThrough;
  }
  errno = saved;
  return fd;
}

mode_t mode_arg(int flags, va_list ap) {
  return open_needs_mode(flags) ? static_cast<mode_t>(va_arg(ap, unsigned)) : 0;
}

}  // namespace
}  // namespace ckptfwd::interpose

using namespace ckptfwd::interpose;

#define CKPTFWD_OPEN(name)                                            \
  CKPTFWD_EXPORT int name(const char* path, int flags, ...) {         \
    va_list ap;                                                       \
    va_start(ap, flags);                                              \
    mode_t mode = mode_arg(flags, ap);                                \
    va_end(ap);                                                       \
    int fd = open_core(AT_FDCWD, path, flags, mode);                  \
    return fd != kPassThrough ? fd : real::name()(path, flags, mode); \
  }
#define CKPTFWD_OPENAT(name)                                                 \
  CKPTFWD_EXPORT int name(int dirfd, const char* path, int flags, ...) {     \
    va_list ap;                                                              \
    va_start(ap, flags);                                                     \
    mode_t mode = mode_arg(flags, ap);                                       \
    va_end(ap);                                                              \
    int fd = open_core(dirfd, path, flags, mode);                            \
    return fd != kPassThrough ? fd : real::name()(dirfd, path, flags, mode); \
  }
#define CKPTFWD_CREAT(name)                                                 \
  CKPTFWD_EXPORT int name(const char* path, mode_t mode) {                  \
    int fd = open_core(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode); \
    return fd != kPassThrough ? fd : real::name()(path, mode);              \
  }
// _FORTIFY_SOURCE entry points: no mode argument (the compiler proved none is needed).
#define CKPTFWD_OPEN2(name)                                     \
  CKPTFWD_EXPORT int name(const char* path, int flags) {        \
    int fd = open_core(AT_FDCWD, path, flags, 0);               \
    return fd != kPassThrough ? fd : real::name()(path, flags); \
  }
#define CKPTFWD_OPENAT2(name)                                          \
  CKPTFWD_EXPORT int name(int dirfd, const char* path, int flags) {    \
    int fd = open_core(dirfd, path, flags, 0);                         \
    return fd != kPassThrough ? fd : real::name()(dirfd, path, flags); \
  }

CKPTFWD_OPEN(open)
CKPTFWD_OPEN(open64)
CKPTFWD_OPENAT(openat)
CKPTFWD_OPENAT(openat64)
CKPTFWD_CREAT(creat)
CKPTFWD_CREAT(creat64)
CKPTFWD_OPEN2(__open_2)
CKPTFWD_OPEN2(__open64_2)
CKPTFWD_OPENAT2(__openat_2)
CKPTFWD_OPENAT2(__openat64_2)
