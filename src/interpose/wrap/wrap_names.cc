// Calls that act on names: unlink/remove, rename, truncate. For captured paths they act
// on the forwarder's catalog (applications rotate checkpoints with write-then-rename).
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "interpose/setup/state.h"
#include "interpose/track/versions.h"
#include "interpose/wrap/real.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1 << 2)
#endif

using namespace ckptfwd::interpose;
namespace wire = ckptfwd::wire;

namespace {

Result simple_call(const char* verb, const char* a, const char* b = nullptr) {
  const char* req[] = {verb, a, b};
  return call(req, b ? 3 : 2);
}

// 1 done (0 returned), 0 pass through, -1 failed (errno set).
int unlink_captured(int dirfd, const char* path, int flags) {
  if (!intercepting() || (flags & AT_REMOVEDIR)) return 0;
  int saved = errno;
  char norm[PATH_MAX];
  if (!captured_path(dirfd, path, norm, false)) return 0;  // errno untouched (state.h)
  Busy busy;
  Result r = simple_call(wire::kUnlink, norm);
  int h = take_reply(r.status, r.err, saved);
  if (h > 0) {
    real::unlink()(norm);  // a real file left by an earlier fallback goes too
    errno = saved;
  }
  return h;
}

bool forwarder_knows(const char* norm) {
  const char* req[] = {wire::kStat, norm};
  return call(req, 2).status == Status::kOk;
}

template <class Real>
int rename_common(int olddir, const char* oldp, int newdir, const char* newp, unsigned flags,
                  Real real_rename) {
  if (!intercepting()) return real_rename();
  int saved = errno;
  char on[PATH_MAX];
  char nn[PATH_MAX];
  bool oc = captured_path(olddir, oldp, on, false);
  bool nc = captured_path(newdir, newp, nn, false);
  errno = saved;
  if (!oc && !nc) return real_rename();
  Busy busy;
  if (flags & (RENAME_EXCHANGE | RENAME_WHITEOUT)) {
    errno = EINVAL;  // the catalog cannot swap or whiteout
    return -1;
  }
  if ((flags & RENAME_NOREPLACE) && nc && forwarder_knows(nn)) {
    errno = EEXIST;
    return -1;
  }
  if (oc && nc) {
    Result r = simple_call(wire::kRename, on, nn);
    int h = take_reply(r.status, r.err, saved);
    if (h <= 0) return h < 0 ? -1 : real_rename();
    struct stat st {};
    if (real::lstat()(nn, &st) == 0 && S_ISREG(st.st_mode)) real::unlink()(nn);  // stale real
    errno = saved;
    return 0;
  }
  if (oc) {
    // Out of the captured area: the bytes must become a real file. mv copies on EXDEV.
    if (forwarder_knows(on)) {
      errno = EXDEV;
      return -1;
    }
    errno = saved;
    return real_rename();
  }
  // A real file moves onto a captured name: it replaces the catalog's version.
  int rc = real_rename();
  if (rc == 0) {
    simple_call(wire::kUnlink, nn);
    errno = saved;
  }
  return rc;
}

// truncate(path) of a captured file: a new version cut to length.
int truncate_captured(const char* path, off_t len) {
  if (!intercepting()) return 0;
  int saved = errno;
  char norm[PATH_MAX];
  if (!captured_path(AT_FDCWD, path, norm)) return 0;  // errno untouched (state.h)
  Busy busy;
  OpenReply r;
  request_open(norm, O_WRONLY, 0, r);
  int h = take_reply(r.status, r.err, saved);
  if (h <= 0) return h;
  if (r.vid == 0) {
    errno = saved;
    return 0;
  }
  // Through an O_NOFOLLOW fd: a staged name is a plain file of our session dir.
  int sfd = real::open()(r.staged, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  int rc = sfd < 0 ? -1 : real::ftruncate()(sfd, len);
  int err = errno;
  if (sfd >= 0) real::close()(sfd);
  send_close(r.vid, staged_size_of(r.staged));
  errno = rc == 0 ? saved : err;
  return rc == 0 ? 1 : -1;
}

}  // namespace

CKPTFWD_EXPORT int unlink(const char* path) {
  int h = unlink_captured(AT_FDCWD, path, 0);
  return h ? (h > 0 ? 0 : -1) : real::unlink()(path);
}
CKPTFWD_EXPORT int unlinkat(int dirfd, const char* path, int flags) {
  int h = unlink_captured(dirfd, path, flags);
  return h ? (h > 0 ? 0 : -1) : real::unlinkat()(dirfd, path, flags);
}
CKPTFWD_EXPORT int remove(const char* path) {
  int h = unlink_captured(AT_FDCWD, path, 0);
  return h ? (h > 0 ? 0 : -1) : real::remove()(path);
}

CKPTFWD_EXPORT int rename(const char* oldp, const char* newp) {
  return rename_common(AT_FDCWD, oldp, AT_FDCWD, newp, 0,
                       [&] { return real::rename()(oldp, newp); });
}
CKPTFWD_EXPORT int renameat(int od, const char* oldp, int nd, const char* newp) {
  return rename_common(od, oldp, nd, newp, 0, [&] { return real::renameat()(od, oldp, nd, newp); });
}
CKPTFWD_EXPORT int renameat2(int od, const char* oldp, int nd, const char* newp, unsigned fl) {
  return rename_common(od, oldp, nd, newp, fl,
                       [&] { return real::renameat2()(od, oldp, nd, newp, fl); });
}

CKPTFWD_EXPORT int truncate(const char* path, off_t len) {
  int h = truncate_captured(path, len);
  return h ? (h > 0 ? 0 : -1) : real::truncate()(path, len);
}
CKPTFWD_EXPORT int truncate64(const char* path, off_t len) {
  int h = truncate_captured(path, len);
  return h ? (h > 0 ? 0 : -1) : real::truncate64()(path, len);
}
