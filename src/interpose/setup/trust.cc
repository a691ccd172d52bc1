#include "interpose/setup/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "interpose/wrap/real.h"

namespace ckptfwd::interpose {

namespace {
// The staging root holding the session directory dir (CKPTFWD_STAGE_DIR): it exists as a
// directory, or is created now (mode 0700, as the election would). Else false with *why
// naming the key, the path, the cause and the fix: a root that cannot be used is a
// setting to fix, not a session directory to refuse.
bool stage_root_usable(const char* dir, char* why, size_t cap) {
  char root[PATH_MAX];
  const char* slash = strrchr(dir, '/');
  size_t n = slash ? static_cast<size_t>(slash - dir) : 0;
  if (n == 0 || n >= sizeof(root)) return true;  // "/" or not a path of ours: nothing to say
  memcpy(root, dir, n);
  root[n] = '\0';
  struct stat st {};
  if (real::stat()(root, &st) == 0 && S_ISDIR(st.st_mode)) return true;
  if (mkdir(root, 0700) == 0 || errno == EEXIST) {
    if (real::stat()(root, &st) == 0 && S_ISDIR(st.st_mode)) return true;
    errno = ENOTDIR;
  }
  snprintf(why, cap,
           "CKPTFWD_STAGE_DIR=%s cannot be used: %s. Fix: set CKPTFWD_STAGE_DIR to a "
           "node-local directory you can write (the default is /dev/shm)",
           root, strerror(errno));
  return false;
}
}  // namespace

DirCheck check_session_dir(const char* dir, char* why, size_t cap) {
  // O_NOFOLLOW|O_DIRECTORY then fstat: what is checked is what the name leads to now,
  // and a symbolic link planted under our name fails the open itself (ELOOP/ENOTDIR).
  int fd = real::open()(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT)
      return stage_root_usable(dir, why, cap) ? DirCheck::kMissing : DirCheck::kRefused;
    if (e == ELOOP || e == ENOTDIR)
      snprintf(why, cap,
               "refusing session directory %s: it is a symbolic link or not a "
               "directory (someone else may have planted it). Fix: remove it",
               dir);
    else
      snprintf(why, cap, "cannot open session directory %s: %s", dir, strerror(e));
    return DirCheck::kRefused;
  }
  struct stat st {};
  int rc = real::fstat()(fd, &st);
  int e = errno;
  real::close()(fd);
  if (rc != 0) {
    snprintf(why, cap, "cannot stat session directory %s: %s", dir, strerror(e));
    return DirCheck::kRefused;
  }
  if (st.st_uid != geteuid()) {
    snprintf(why, cap,
             "refusing session directory %s: it belongs to uid %u, not to us (uid "
             "%u). Fix: remove it, or set CKPTFWD_STAGE_DIR elsewhere",
             dir, static_cast<unsigned>(st.st_uid), static_cast<unsigned>(geteuid()));
    return DirCheck::kRefused;
  }
  if (st.st_mode & 077) {
    snprintf(why, cap,
             "refusing session directory %s: mode %03o lets group/other in. Fix: "
             "remove it (or chmod 700 it)",
             dir, static_cast<unsigned>(st.st_mode & 0777));
    return DirCheck::kRefused;
  }
  return DirCheck::kOurs;
}

bool peer_is_self(int fd, const char* socket_path, const char* dir, char* why, size_t cap) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    snprintf(why, cap, "refusing forwarder socket %s: SO_PEERCRED: %s", socket_path,
             strerror(errno));
    return false;
  }
  if (cred.uid == geteuid()) return true;
  snprintf(why, cap,
           "refusing forwarder socket %s: it is served by pid %ld of uid %u, not "
           "by us (uid %u). Fix: remove %s",
           socket_path, static_cast<long>(cred.pid), static_cast<unsigned>(cred.uid),
           static_cast<unsigned>(geteuid()), dir);
  return false;
}

bool staged_path_inside(const char* staged, const char* dir) {
  size_t n = strlen(dir);
  if (n == 0 || strncmp(staged, dir, n) != 0 || staged[n] != '/') return false;
  const char* name = staged + n + 1;
  return name[0] && !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

}  // namespace ckptfwd::interpose
