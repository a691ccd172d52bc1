// fd lifetime: close, the dup family, fcntl(F_DUPFD*), and the sync calls that wait for
// the forwarder's commit.
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>

#include "interpose/setup/state.h"
#include "interpose/track/blocked_time.h"
#include "interpose/track/extent_log.h"
#include "interpose/track/versions.h"
#include "interpose/wrap/real.h"

using namespace ckptfwd::interpose;
namespace wire = ckptfwd::wire;

namespace {

// After the real call duplicated oldfd onto newfd (newfd >= 0).
void after_dup(int oldfd, int newfd) {
  if (t_busy || g_fds.capacity() == 0) return;
  Busy busy;
  ErrnoKeeper keep;
  track_dup(oldfd, newfd);
}

// fsync/fdatasync: the real call (timed on a captured fd), then wait until the version is
// on the store.
template <class RealSync>
int sync_version(int fd, RealSync real_sync) {
  Version* v = t_busy ? nullptr : g_fds.get(fd);
  if (!v) return real_sync();
  int rc;
  {
    BlockedTimer blocked_timer(v);
    rc = real_sync();
  }
  if (rc != 0 || v->view || !v->owned.load() || v->abandoned.load()) return rc;
  Busy busy;
  ErrnoKeeper keep;
  char vid[24];
  wire::fmt_i64(vid, static_cast<long long>(v->vid));
  // A version shared across nodes: the snapshot the forwarder commits holds exactly the
  // extents written so far, so they go with the SYNC.
  // Dtype hints (typed MPI writes) go with it too, so the snapshot carries them.
  char ext[96];
  char hints[112];
  char blocked[40];
  bool has_ext = v->ext && extent_log_hand_over(v->ext, ext, sizeof(ext));
  bool has_hints = hand_over_hints(v, hints, sizeof(hints));
  bool has_blocked = hand_over_blocked(v, blocked, sizeof(blocked));
  const char* req[5] = {wire::kSync, vid};
  size_t n = 2;
  if (has_ext) req[n++] = ext;
  if (has_hints) req[n++] = hints;
  if (has_blocked) req[n++] = blocked;
  Result r = call_waiting(req, n);  // other threads' opens go on meanwhile
  if (r.status == Status::kOk) return 0;
  if (r.status == Status::kErr)
    log_msg("fsync of %s failed: the store did not commit it (%s)", v->path, strerror(r.err));
  else
    log_msg("fsync of %s failed: forwarder unreachable (%s)", v->path, unreachable_reason());
  keep.fail(EIO);
  return -1;
}

int fcntl_common(int (*real_fcntl)(int, int, ...), int fd, int cmd, void* arg) {
  // glibc itself fetches the optional argument as a pointer-sized value for every cmd.
  int r = real_fcntl(fd, cmd, arg);
  if ((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && r >= 0) after_dup(fd, r);
  return r;
}

}  // namespace

CKPTFWD_EXPORT int close(int fd) {
  if (t_busy) return real::close()(fd);
  client_fd_gone(fd);
  Version* v = g_fds.detach(fd);  // before the close: the number may be reused at once
  unsigned long long t0 = v ? blocked_clock_ns() : 0;
  int rc = real::close()(fd);
  if (v) {
    Busy busy;
    ErrnoKeeper keep;
    v->blocked_ns.fetch_add(blocked_clock_ns() - t0, std::memory_order_relaxed);
    // The bytes were neither handed over nor written to the real path: say so (they are
    // still in staging, named in the log), as a file system reports a failed write-back.
    if (!release_version(v) && rc == 0) {
      keep.fail(EIO);
      rc = -1;
    }
  }
  return rc;
}

CKPTFWD_EXPORT int dup(int fd) {
  int r = real::dup()(fd);
  if (r >= 0) after_dup(fd, r);
  return r;
}

CKPTFWD_EXPORT int dup2(int oldfd, int newfd) {
  if (!t_busy && oldfd != newfd) client_fd_gone(newfd);
  int r = real::dup2()(oldfd, newfd);
  if (r >= 0) after_dup(oldfd, r);
  return r;
}

CKPTFWD_EXPORT int dup3(int oldfd, int newfd, int flags) {
  if (!t_busy && oldfd != newfd) client_fd_gone(newfd);
  int r = real::dup3()(oldfd, newfd, flags);
  if (r >= 0) after_dup(oldfd, r);
  return r;
}

CKPTFWD_EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fcntl_common(real::fcntl(), fd, cmd, arg);
}

CKPTFWD_EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fcntl_common(real::fcntl64(), fd, cmd, arg);
}

CKPTFWD_EXPORT int fsync(int fd) {
  return sync_version(fd, [fd] { return real::fsync()(fd); });
}
CKPTFWD_EXPORT int fdatasync(int fd) {
  return sync_version(fd, [fd] { return real::fdatasync()(fd); });
}
