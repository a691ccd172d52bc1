// umask and the chmod family.
//   umask: the library caches the umask (for the mode of new captured files); a process
//     that changes it later (shells: `umask 077; cmd > f`, os.umask) must be seen.
//   chmod/fchmodat/lchmod of a captured path: the forwarder changes the mode of the newest
//     staged version, or records a `chmod` in the store's manifest (CHMOD).
//   fchmod of a tracked fd: CHMOD of the fd's path (the staged file itself stays 0600);
//     if the forwarder cannot take it, the real fchmod on the staged fd, whose bits the
//     forwarder takes at CLOSE.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "interpose/setup/state.h"
#include "interpose/track/versions.h"
#include "interpose/wrap/real.h"

using namespace ckptfwd::interpose;
namespace wire = ckptfwd::wire;

namespace {

// The library's own records of open fds of path show the new mode in fstat.
void note_mode(const char* norm, mode_t mode) {
  g_fds.for_each([&](int, Version* v) {
    if (strcmp(v->path, norm) == 0) v->mode = mode & 07777;
  });
}

Result send_chmod(const char* norm, mode_t mode) {
  char md[24];
  wire::fmt_octal(md, mode & 07777);
  const char* req[] = {wire::kChmod, norm, md};
  return call(req, 3);
}

// 1 done (0 returned), 0 pass through, -1 failed (errno set). follow: chmod follows a
// captured symbolic link to the captured file; lchmod and AT_SYMLINK_NOFOLLOW act on the
// link itself (the real call).
int chmod_captured(int dirfd, const char* path, mode_t mode, bool follow) {
  if (!intercepting()) return 0;
  int saved = errno;
  char norm[PATH_MAX];
  if (!captured_path(dirfd, path, norm, follow)) return 0;  // errno untouched (state.h)
  Busy busy;
  Result r = send_chmod(norm, mode);
  int h = take_reply(r.status, r.err, saved);  // 0: not the forwarder's file, the real one
  if (h > 0) {
    note_mode(norm, mode);
    errno = saved;
  }
  return h;
}

}  // namespace

CKPTFWD_EXPORT mode_t umask(mode_t mask) {
  mode_t old = real::umask()(mask);
  __atomic_store_n(&g_settings.umask, mask & 0777, __ATOMIC_RELAXED);
  return old;
}

CKPTFWD_EXPORT int chmod(const char* path, mode_t mode) {
  int h = chmod_captured(AT_FDCWD, path, mode, true);
  return h ? (h > 0 ? 0 : -1) : real::chmod()(path, mode);
}

CKPTFWD_EXPORT int lchmod(const char* path, mode_t mode) {
  int h = chmod_captured(AT_FDCWD, path, mode, false);
  return h ? (h > 0 ? 0 : -1) : real::lchmod()(path, mode);
}

CKPTFWD_EXPORT int fchmodat(int dirfd, const char* path, mode_t mode, int flags) {
  // "" (AT_EMPTY_PATH) never resolves
  int h = chmod_captured(dirfd, path, mode, !(flags & AT_SYMLINK_NOFOLLOW));
  return h ? (h > 0 ? 0 : -1) : real::fchmodat()(dirfd, path, mode, flags);
}

CKPTFWD_EXPORT int fchmod(int fd, mode_t mode) {
  Version* v = t_busy ? nullptr : g_fds.get(fd);
  if (!v || v->abandoned.load()) return real::fchmod()(fd, mode);
  Busy busy;
  int saved = errno;
  // Staged files stay 0600: the mode goes to the forwarder. Only if it cannot take it
  // the staged file gets the bits (the forwarder reads them at CLOSE).
  if (send_chmod(v->path, mode).status != Status::kOk) {
    int rc = real::fchmod()(fd, mode);
    if (rc != 0) return rc;
  }
  v->mode = mode & 07777;
  note_mode(v->path, mode);
  errno = saved;
  return 0;
}
