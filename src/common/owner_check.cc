#include "common/owner_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ckptfwd {

namespace {
std::string uid_text(uid_t uid) { return std::to_string(static_cast<unsigned long>(uid)); }
}  // namespace

bool check_store_dir(const std::string& dir, std::string* err) {
  struct stat lst, st;
  if (::lstat(dir.c_str(), &lst) != 0 || ::stat(dir.c_str(), &st) != 0) {
    if (err) *err = "cannot stat store directory " + dir + ": " + strerror(errno);
    return false;
  }
  uid_t me = geteuid();
  if (S_ISLNK(lst.st_mode) && lst.st_uid != me) {
    if (err)
      *err = "store " + dir + " is a symbolic link owned by uid " + uid_text(lst.st_uid) +
             ", not by you (uid " + uid_text(me) +
             "); refusing to use it. Fix: remove it, or "
             "set CKPTFWD_STORE to a directory of yours";
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (err) *err = "store " + dir + " is not a directory. Fix: remove it, or set CKPTFWD_STORE";
    return false;
  }
  if (st.st_uid != me) {
    if (err)
      *err = "store directory " + dir + " belongs to uid " + uid_text(st.st_uid) +
             ", not to you (uid " + uid_text(me) +
             "); its MANIFEST and containers could be "
             "forged, refusing to use it. Fix: remove it (or set CKPTFWD_STORE to a directory "
             "of yours)";
    return false;
  }
  if (st.st_mode & 022) {
    char m[8];
    snprintf(m, sizeof(m), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    if (err)
      *err = "store directory " + dir + " has mode " + m +
             ": group/other can write into it; "
             "refusing to use it. Fix: chmod go-w " +
             dir;
    return false;
  }
  return true;
}

long long owner_of(const std::string& dir) {
  struct stat st;
  return ::stat(dir.c_str(), &st) == 0 ? static_cast<long long>(st.st_uid) : -1;
}

int open_owned(const std::string& path, int flags, mode_t mode, std::string* err) {
  int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    int e = errno;
    if (e == ELOOP && err)
      *err = path +
             " is a symbolic link; refusing to follow it (it could lead anywhere). "
             "Fix: remove it";
    errno = e;
    return -1;
  }
  struct stat st {};
  bool stat_failed = ::fstat(fd, &st) != 0;
  if (stat_failed || st.st_uid != geteuid()) {
    int e = stat_failed ? errno : EPERM;
    ::close(fd);
    if (err)
      *err = stat_failed ? path + ": cannot stat: " + strerror(e)
                         : path + " belongs to uid " + uid_text(st.st_uid) +
                               ", not to you; "
                               "refusing to use it. Fix: remove it";
    errno = e;
    return -1;
  }
  return fd;
}

}  // namespace ckptfwd
