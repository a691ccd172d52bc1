#include "forwarder/daemon/dead_sessions.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "forwarder/daemon/listener.h"
#include "forwarder/daemon/recovery.h"
#include "forwarder/restore/restore.h"
#include "forwarder/util/log.h"

namespace ckptfwd::fwd {

namespace {

// Whether a process listens on the socket at path (a live forwarder). A missing socket or
// a refused connection: nobody; anything else (a path too long): cannot tell, so yes.
bool someone_listens(const std::string& path) {
  int fd = connect_control_socket(path);
  if (fd >= 0) {
    close(fd);
    return true;
  }
  return errno != ECONNREFUSED && errno != ENOENT;
}

// Empties dir (a dead session's, its lock held) but for its lock, unless it holds a staged
// version to recover: then only its read views go. True when emptied.
bool clear_session(const std::string& dir) {
  remove_read_views(dir);
  if (holds_version_to_recover(dir)) return false;
  DIR* d = opendir(dir.c_str());
  if (!d) return false;
  while (dirent* de = readdir(d))
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, "lock"))
      unlinkat(dirfd(d), de->d_name, 0);
  closedir(d);
  return true;
}

// One other session directory: swept when its forwarder is gone. The lock is held while
// it is looked at, as a forwarder removing its own directory holds it (forwarder.cc), so
// a library starting a forwarder there waits, then finds the lock file gone and starts
// over in a new directory (interpose/client/client_connect.cc).
void sweep_one(const std::string& dir) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) return;
  int lock = open((dir + "/lock").c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (lock < 0) return;  // no lock: being set up, or not a session directory
  if (flock(lock, LOCK_EX | LOCK_NB) != 0 || someone_listens(dir + "/sock")) {
    close(lock);
    return;
  }
  if (clear_session(dir)) {
    unlink((dir + "/lock").c_str());
    if (rmdir(dir.c_str()) == 0)
      LOG_INFO("removed %s, the session directory of a forwarder that is gone", dir.c_str());
  } else {
    LOG_INFO(
        "%s, the session directory of a forwarder that is gone, holds staged versions not "
        "yet committed: kept for that job's next forwarder (its read views removed)",
        dir.c_str());
  }
  close(lock);
}

}  // namespace

void sweep_dead_sessions(const std::string& stage_root, const std::string& own_dir) {
  const std::string prefix = "ckptfwd-" + std::to_string(geteuid()) + "-";
  DIR* d = opendir(stage_root.c_str());
  if (!d) return;
  std::vector<std::string> dirs;
  while (dirent* de = readdir(d))
    if (strncmp(de->d_name, prefix.c_str(), prefix.size()) == 0)
      dirs.push_back(stage_root + "/" + de->d_name);
  closedir(d);
  for (const std::string& dir : dirs)
    if (dir != own_dir) sweep_one(dir);
}

}  // namespace ckptfwd::fwd
