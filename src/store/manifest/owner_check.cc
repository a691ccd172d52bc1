#include "store/manifest/owner_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ckptfwd {

namespace {
std::string uid_text(uid_t uid) { return std::to_string(static_cast<unsigned long>(uid)); }

// Why the directory st (named dir) is not a store of ours, or "": a directory owned by our
// effective uid that group and other cannot write into.
std::string store_dir_refusal(const std::string& dir, const struct stat& st) {
  uid_t me = geteuid();
  if (!S_ISDIR(st.st_mode))
    return "store " + dir + " is not a directory. Fix: remove it, or set CKPTFWD_STORE";
  if (st.st_uid != me)
    return "store directory " + dir + " belongs to uid " + uid_text(st.st_uid) +
           ", not to you (uid " + uid_text(me) +
           "); its MANIFEST and containers could be "
           "forged, refusing to use it. Fix: remove it (or set CKPTFWD_STORE to a directory "
           "of yours)";
  if (st.st_mode & 022) {
    char m[8];
    snprintf(m, sizeof(m), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return "store directory " + dir + " has mode " + m +
           ": group/other can write into it; "
           "refusing to use it. Fix: chmod go-w " +
           dir;
  }
  return "";
}

// Why dir, as lstat found it (lst), may not lead to a store of ours, or "": a symbolic
// link must be ours too.
std::string store_link_refusal(const std::string& dir, const struct stat& lst) {
  uid_t me = geteuid();
  if (!S_ISLNK(lst.st_mode) || lst.st_uid == me) return "";
  return "store " + dir + " is a symbolic link owned by uid " + uid_text(lst.st_uid) +
         ", not by you (uid " + uid_text(me) +
         "); refusing to use it. Fix: remove it, or "
         "set CKPTFWD_STORE to a directory of yours";
}
}  // namespace

bool check_store_dir(const std::string& dir, std::string* err) {
  struct stat lst, st;
  if (::lstat(dir.c_str(), &lst) != 0 || ::stat(dir.c_str(), &st) != 0) {
    if (err) *err = "cannot stat store directory " + dir + ": " + strerror(errno);
    return false;
  }
  std::string why = store_link_refusal(dir, lst);
  if (why.empty()) why = store_dir_refusal(dir, st);
  if (!why.empty() && err) *err = why;
  return why.empty();
}

int open_store_dir(const std::string& dir, std::string* err) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (err) *err = "cannot open store directory " + dir + ": " + strerror(e);
    errno = e;
    return -1;
  }
  // The name as it is now, after the open: a symbolic link swapped in or out meanwhile
  // shows as another user's link or as a directory other than the one opened.
  struct stat lst, st;
  std::string why;
  if (::lstat(dir.c_str(), &lst) != 0 || ::fstat(fd, &st) != 0)
    why = "cannot stat store directory " + dir + ": " + strerror(errno);
  else if (!S_ISLNK(lst.st_mode) && (lst.st_dev != st.st_dev || lst.st_ino != st.st_ino))
    why = "store " + dir +
          " was replaced while it was opened; refusing to use it. Fix: make sure "
          "only you can write into its parent directory, or set CKPTFWD_STORE";
  else
    why = store_link_refusal(dir, lst);
  if (why.empty()) why = store_dir_refusal(dir, st);
  if (why.empty()) return fd;
  ::close(fd);
  if (err) *err = why;
  errno = EPERM;
  return -1;
}

int open_owned(const std::string& path, int flags, mode_t mode, std::string* err) {
  return open_owned_at(AT_FDCWD, path, path, flags, mode, err);
}

int open_owned_at(int dir_fd, const std::string& name, const std::string& path, int flags,
                  mode_t mode, std::string* err) {
  int fd = ::openat(dir_fd, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
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
