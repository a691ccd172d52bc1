#include "forwarder/daemon/session_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ckptfwd::fwd {

namespace {
bool mkdir_p(const std::string& path, std::string* err) {
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty()) continue;
    if (mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST) {
      if (err)
        *err = "cannot create " + cur + ": " + strerror(errno) +
               ". Fix: set CKPTFWD_STAGE_DIR to a writable directory (node-local tmpfs)";
      return false;
    }
  }
  return true;
}
}  // namespace

bool prepare_session_dir(const std::string& root, const std::string& dir, std::string* err) {
  if (!mkdir_p(root, err)) return false;
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    if (err)
      *err = "cannot create session directory " + dir + ": " + strerror(errno) +
             ". Fix: set CKPTFWD_STAGE_DIR to a writable directory";
    return false;
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    if (err) *err = "cannot stat " + dir + ": " + strerror(errno);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (err) *err = dir + " exists but is not a directory; refusing to use it. Fix: remove it";
    return false;
  }
  if (st.st_uid != getuid()) {
    if (err)
      *err = dir + " belongs to uid " + std::to_string(st.st_uid) + ", not to us (uid " +
             std::to_string(getuid()) +
             "); refusing to use it. Fix: remove it, or set "
             "CKPTFWD_STAGE_DIR elsewhere";
    return false;
  }
  if (st.st_mode & 077) {
    char m[8];
    snprintf(m, sizeof(m), "%03o", st.st_mode & 0777);
    if (err)
      *err = dir + " has mode " + m +
             " (group/other may access it); refusing to use it. "
             "Fix: chmod 700 " +
             dir;
    return false;
  }
  return true;
}

}  // namespace ckptfwd::fwd
