// realpath, canonicalize_file_name, readlink, link: name resolution of captured files. glibc's
// realpath resolves with its internal readlink, which the library cannot see: a captured
// file exists only through the library, so without these wrappers realpath() of one
// fails with ENOENT, and readlink says ENOENT where a regular file gives EINVAL (gnulib's
// canonicalize, i.e. `realpath -e` and `readlink -e`, then gives up). Each does the real
// call first and steps in only when it failed with ENOENT on a captured file the
// forwarder knows. A hard link to a captured file is not supported (the catalog has one
// name per file): link says so with EPERM, as a file system without hard links does,
// and a log line with the way out.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "interpose/setup/state.h"
#include "interpose/wrap/captured_stat.h"
#include "interpose/wrap/real.h"

using namespace ckptfwd::interpose;

namespace {

// True if path (relative to dirfd) is a captured file the forwarder knows; norm gets its
// absolute, lexically normalized name. errno untouched.
bool known_captured(int dirfd, const char* path, char* norm) {
  int saved = errno;
  struct stat st;
  bool known = path && describe_captured(dirfd, path, 0, &st, norm) == 1;
  errno = saved;
  return known;
}

// The canonical name of captured file norm into out (cap bytes): its directory resolved
// by the real realpath (symbolic links in it followed), then its own name. False with
// errno on failure.
bool canonical_captured(const char* norm, char* out, size_t cap) {
  const char* slash = strrchr(norm, '/');  // norm is absolute: there is one
  char dir[PATH_MAX];
  size_t dlen = slash == norm ? 1 : static_cast<size_t>(slash - norm);  // "/" for "/name"
  memcpy(dir, norm, dlen);
  dir[dlen] = '\0';
  char real_dir[PATH_MAX];
  if (!real::realpath()(dir, real_dir)) return false;
  size_t rlen = strlen(real_dir);
  const char* base = slash + 1;
  bool root = rlen == 1;
  if (rlen + (root ? 0 : 1) + strlen(base) + 1 > cap) {
    errno = ENAMETOOLONG;
    return false;
  }
  memcpy(out, real_dir, rlen);
  if (!root) out[rlen++] = '/';
  strcpy(out + rlen, base);
  return true;
}

// After the real call failed: the canonical name of a captured file into resolved (or a
// malloc'd buffer if null), with errno back to before_call; or null with the real call's
// errno.
char* resolve_captured(const char* path, char* resolved, int before_call) {
  char norm[PATH_MAX];
  if (errno != ENOENT || !known_captured(AT_FDCWD, path, norm)) return nullptr;
  int failed = errno;
  char out[PATH_MAX];
  if (!canonical_captured(norm, out, sizeof(out))) {
    errno = failed;
    return nullptr;
  }
  char* r = resolved ? strcpy(resolved, out) : strdup(out);
  errno = r ? before_call : failed;
  return r;
}

}  // namespace

CKPTFWD_EXPORT char* realpath(const char* path, char* resolved) {
  int before = errno;
  char* r = real::realpath()(path, resolved);
  return r ? r : resolve_captured(path, resolved, before);
}

CKPTFWD_EXPORT char* __realpath_chk(const char* path, char* resolved, size_t resolvedlen) {
  int before = errno;
  char* r = real::__realpath_chk()(path, resolved, resolvedlen);
  return r ? r : resolve_captured(path, resolved, before);  // resolved: PATH_MAX, checked above
}

CKPTFWD_EXPORT char* canonicalize_file_name(const char* path) {
  int before = errno;
  char* r = real::canonicalize_file_name()(path);
  return r ? r : resolve_captured(path, nullptr, before);
}

CKPTFWD_EXPORT ssize_t readlinkat(int dirfd, const char* path, char* buf, size_t size) {
  ssize_t n = real::readlinkat()(dirfd, path, buf, size);
  char norm[PATH_MAX];
  if (n < 0 && errno == ENOENT && known_captured(dirfd, path, norm)) errno = EINVAL;
  return n;
}

CKPTFWD_EXPORT ssize_t readlink(const char* path, char* buf, size_t size) {
  return readlinkat(AT_FDCWD, path, buf, size);
}

CKPTFWD_EXPORT int linkat(int olddir, const char* oldpath, int newdir, const char* newpath,
                          int flags) {
  int rc = real::linkat()(olddir, oldpath, newdir, newpath, flags);
  char norm[PATH_MAX];
  if (rc != 0 && errno == ENOENT && known_captured(olddir, oldpath, norm)) {
    log_msg(
        "cannot hard-link captured file %s: not supported; copy it (cp) or make a "
        "symbolic link (ln -s)",
        norm);
    errno = EPERM;
  }
  return rc;
}

CKPTFWD_EXPORT int link(const char* oldpath, const char* newpath) {
  return linkat(AT_FDCWD, oldpath, AT_FDCWD, newpath, 0);
}
