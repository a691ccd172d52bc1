// stat family, statx, access: a captured path is described by the forwarder (STAT); its
// attributes are synthesized on top of the parent directory's (owner, device).
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "interpose/setup/state.h"
#include "interpose/track/versions.h"
#include "interpose/wrap/captured_stat.h"
#include "interpose/wrap/real.h"

using namespace ckptfwd::interpose;
namespace wire = ckptfwd::wire;

static_assert(sizeof(struct stat) == sizeof(struct stat64), "x86_64/aarch64 LP64 layout");

namespace {

struct StatInfo {
  long long size = 0;
  unsigned mode = 0644;
  long long mtime_sec = 0;
  long long mtime_nsec = 0;
};

// 1: described by the forwarder (info filled); 0: not its file (do the real call);
// -1: the forwarder says it fails (errno set).
int stat_request(const char* norm, StatInfo& info) {
  Busy busy;
  const char* req[] = {wire::kStat, norm};
  auto parse = [&info](const wire::Fields& f) {
    unsigned m = 0;
    wire::parse_i64(f[1], info.size);
    if (wire::parse_octal(f[2], m)) info.mode = m;
    wire::parse_i64(f[3], info.mtime_sec);
    wire::parse_i64(f[4], info.mtime_nsec);
  };
  Result r = call_with(req, 2, parse);
  if (r.status == Status::kOk) return 1;
  if (r.status == Status::kErr) {
    errno = r.err;
    return -1;
  }
  return 0;
}

void fill_stat(const char* norm, const StatInfo& info, struct stat* st) {
  char parent[PATH_MAX];
  strcpy(parent, norm);
  char* slash = strrchr(parent, '/');
  if (slash) slash[slash == parent ? 1 : 0] = '\0';
  struct stat dir {};
  if (real::stat()(parent, &dir) != 0) {
    dir.st_uid = getuid();
    dir.st_gid = getgid();
  }
  memset(st, 0, sizeof(*st));
  st->st_dev = dir.st_dev;
  st->st_uid = dir.st_uid;
  st->st_gid = dir.st_gid;
  st->st_ino = static_cast<ino_t>(path_hash(norm));
  st->st_mode = S_IFREG | (info.mode & 07777);
  st->st_nlink = 1;
  st->st_size = info.size;
  st->st_blksize = 4096;
  st->st_blocks = (info.size + 511) / 512;
  st->st_mtim.tv_sec = info.mtime_sec;
  st->st_mtim.tv_nsec = info.mtime_nsec;
  st->st_ctim = st->st_mtim;
  st->st_atim = st->st_mtim;
}

}  // namespace

int ckptfwd::interpose::describe_captured(int dirfd, const char* path, int atflags, struct stat* st,
                                          char* norm) {
  if (!intercepting()) return 0;
  if ((atflags & AT_EMPTY_PATH) && path && !*path) return 0;  // fd-based
  if (!captured_path(dirfd, path, norm, !(atflags & AT_SYMLINK_NOFOLLOW))) return 0;
  int saved = errno;
  StatInfo info;
  int h = stat_request(norm, info);
  if (h == 1) fill_stat(norm, info, st);
  if (h >= 0) errno = saved;
  return h;
}

namespace {

// 1 handled (st filled), 0 pass through, -1 failed with errno. errno untouched unless -1.
int stat_captured(int dirfd, const char* path, int atflags, struct stat* st) {
  char norm[PATH_MAX];
  return describe_captured(dirfd, path, atflags, st, norm);
}

int statx_captured(int dirfd, const char* path, int flags, struct statx* sx) {
  struct stat st;
  int h = stat_captured(dirfd, path, flags, &st);
  if (h != 1) return h;
  memset(sx, 0, sizeof(*sx));
  sx->stx_mask = STATX_BASIC_STATS;
  sx->stx_blksize = static_cast<__u32>(st.st_blksize);
  sx->stx_nlink = 1;
  sx->stx_uid = st.st_uid;
  sx->stx_gid = st.st_gid;
  sx->stx_mode = static_cast<__u16>(st.st_mode);
  sx->stx_ino = st.st_ino;
  sx->stx_size = static_cast<__u64>(st.st_size);
  sx->stx_blocks = static_cast<__u64>(st.st_blocks);
  sx->stx_mtime.tv_sec = st.st_mtim.tv_sec;
  sx->stx_mtime.tv_nsec = static_cast<__u32>(st.st_mtim.tv_nsec);
  sx->stx_ctime = sx->stx_mtime;
  sx->stx_atime = sx->stx_mtime;
  sx->stx_dev_major = major(st.st_dev);
  sx->stx_dev_minor = minor(st.st_dev);
  return 1;
}

// access(): existence from the forwarder, permission from the owner bits.
int access_captured(int dirfd, const char* path, int mode, int flags) {
  struct stat st;
  int h = stat_captured(dirfd, path, flags & AT_SYMLINK_NOFOLLOW, &st);
  if (h != 1) return h;
  unsigned need =
      ((mode & R_OK) ? 0400u : 0u) | ((mode & W_OK) ? 0200u : 0u) | ((mode & X_OK) ? 0100u : 0u);
  if ((st.st_mode & need) != need) {
    errno = EACCES;
    return -1;
  }
  return 1;
}

inline int done(int h) { return h == 1 ? 0 : -1; }

bool empty_path(const char* p) { return !p || !*p; }

int fixup_fd(int fd, int rc, struct stat* st) {
  if (rc != 0 || t_busy) return rc;
  const Version* v = g_fds.get(fd);
  if (v) present_as_captured(v, st);
  return rc;
}

// Extended attributes: a captured file has none. Asked only when the real call says the
// path does not exist (ls -l, SELinux labels), so real files cost nothing extra.
template <class Real>
ssize_t xattr_common(const char* path, bool is_list, Real real_call) {
  int saved = errno;
  ssize_t r = real_call();
  if (r >= 0 || errno != ENOENT || !intercepting()) return r;
  char norm[PATH_MAX];
  StatInfo info;
  if (!captured_path(AT_FDCWD, path, norm) || stat_request(norm, info) != 1) {
    errno = ENOENT;
    return r;
  }
  errno = is_list ? saved : ENODATA;
  return is_list ? 0 : -1;
}

}  // namespace

#define CKPTFWD_STAT(name, st_t, follow_flags)                                                \
  CKPTFWD_EXPORT int name(const char* path, struct st_t* buf) {                               \
    int h = stat_captured(AT_FDCWD, path, follow_flags, reinterpret_cast<struct stat*>(buf)); \
    return h ? done(h) : real::name()(path, buf);                                             \
  }
CKPTFWD_STAT(stat, stat, 0)
CKPTFWD_STAT(stat64, stat64, 0)
CKPTFWD_STAT(lstat, stat, AT_SYMLINK_NOFOLLOW)
CKPTFWD_STAT(lstat64, stat64, AT_SYMLINK_NOFOLLOW)

#define CKPTFWD_FSTATAT(name, st_t)                                                   \
  CKPTFWD_EXPORT int name(int dirfd, const char* path, struct st_t* buf, int flags) { \
    int h = stat_captured(dirfd, path, flags, reinterpret_cast<struct stat*>(buf));   \
    if (h) return done(h);                                                            \
    int rc = real::name()(dirfd, path, buf, flags);                                   \
    if ((flags & AT_EMPTY_PATH) && empty_path(path))                                  \
      fixup_fd(dirfd, rc, reinterpret_cast<struct stat*>(buf));                       \
    return rc;                                                                        \
  }
CKPTFWD_FSTATAT(fstatat, stat)
CKPTFWD_FSTATAT(fstatat64, stat64)

// fstat of a tracked fd: the staged file's bytes, the captured path's identity.
CKPTFWD_EXPORT int fstat(int fd, struct stat* buf) {
  return fixup_fd(fd, real::fstat()(fd, buf), buf);
}
CKPTFWD_EXPORT int fstat64(int fd, struct stat64* buf) {
  return fixup_fd(fd, real::fstat64()(fd, buf), reinterpret_cast<struct stat*>(buf));
}
CKPTFWD_EXPORT int __fxstat(int ver, int fd, struct stat* buf) {
  return fixup_fd(fd, real::__fxstat()(ver, fd, buf), buf);
}
CKPTFWD_EXPORT int __fxstat64(int ver, int fd, struct stat64* buf) {
  return fixup_fd(fd, real::__fxstat64()(ver, fd, buf), reinterpret_cast<struct stat*>(buf));
}

// Pre-2.33 glibc entry points, still used by old binaries: ver is _STAT_VER (1).
#define CKPTFWD_XSTAT(name, st_t, follow_flags)                                               \
  CKPTFWD_EXPORT int name(int ver, const char* path, struct st_t* buf) {                      \
    int h = stat_captured(AT_FDCWD, path, follow_flags, reinterpret_cast<struct stat*>(buf)); \
    return h ? done(h) : real::name()(ver, path, buf);                                        \
  }
CKPTFWD_XSTAT(__xstat, stat, 0)
CKPTFWD_XSTAT(__xstat64, stat64, 0)
CKPTFWD_XSTAT(__lxstat, stat, AT_SYMLINK_NOFOLLOW)
CKPTFWD_XSTAT(__lxstat64, stat64, AT_SYMLINK_NOFOLLOW)

#define CKPTFWD_FXSTATAT(name, st_t)                                                           \
  CKPTFWD_EXPORT int name(int ver, int dirfd, const char* path, struct st_t* buf, int flags) { \
    int h = stat_captured(dirfd, path, flags, reinterpret_cast<struct stat*>(buf));            \
    return h ? done(h) : real::name()(ver, dirfd, path, buf, flags);                           \
  }
CKPTFWD_FXSTATAT(__fxstatat, stat)
CKPTFWD_FXSTATAT(__fxstatat64, stat64)

CKPTFWD_EXPORT int statx(int dirfd, const char* path, int flags, unsigned mask, struct statx* sx) {
  int h = statx_captured(dirfd, path, flags, sx);
  if (h) return done(h);
  int rc = real::statx()(dirfd, path, flags, mask, sx);
  const Version* v = (rc == 0 && !t_busy && (flags & AT_EMPTY_PATH) && empty_path(path))
                         ? g_fds.get(dirfd)
                         : nullptr;
  if (v) {
    sx->stx_ino = path_hash(v->path);
    sx->stx_nlink = 1;
    const unsigned long long dev = version_dev(v);
    sx->stx_dev_major = major(dev);
    sx->stx_dev_minor = minor(dev);
    if (v->mode) sx->stx_mode = static_cast<__u16>(S_IFREG | (v->mode & 07777));
  }
  return rc;
}

CKPTFWD_EXPORT int access(const char* path, int mode) {
  int h = access_captured(AT_FDCWD, path, mode, 0);
  return h ? done(h) : real::access()(path, mode);
}
CKPTFWD_EXPORT int faccessat(int dirfd, const char* path, int mode, int flags) {
  int h = access_captured(dirfd, path, mode, flags);
  return h ? done(h) : real::faccessat()(dirfd, path, mode, flags);
}

CKPTFWD_EXPORT ssize_t getxattr(const char* path, const char* name, void* value, size_t size) {
  return xattr_common(path, false, [&] { return real::getxattr()(path, name, value, size); });
}
CKPTFWD_EXPORT ssize_t lgetxattr(const char* path, const char* name, void* value, size_t size) {
  return xattr_common(path, false, [&] { return real::lgetxattr()(path, name, value, size); });
}
CKPTFWD_EXPORT ssize_t listxattr(const char* path, char* list, size_t size) {
  return xattr_common(path, true, [&] { return real::listxattr()(path, list, size); });
}
CKPTFWD_EXPORT ssize_t llistxattr(const char* path, char* list, size_t size) {
  return xattr_common(path, true, [&] { return real::llistxattr()(path, list, size); });
}
