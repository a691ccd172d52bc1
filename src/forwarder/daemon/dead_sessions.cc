#include "forwarder/daemon/dead_sessions.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

#include "forwarder/util/log.h"

namespace ckptfwd::fwd {

namespace {

bool starts_with(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

// Whether a process listens on the socket at path (a live forwarder). A missing socket or
// a refused connection: nobody.
bool someone_listens(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return true;  // cannot tell: leave it alone
  memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return true;
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int err = errno;
  close(fd);
  return rc == 0 || (err != ECONNREFUSED && err != ENOENT);
}

// A read view (r<16 hex>.data) or one of its temporaries.
bool is_read_view(const char* name) { return name[0] == 'r' && strstr(name, ".data") != nullptr; }

// The vid of a staged version's .meta ("v<vid>.meta"), or false.
bool meta_vid(const std::string& name, std::string* vid) {
  if (name.size() < 7 || name[0] != 'v' || name.compare(name.size() - 5, 5, ".meta") != 0)
    return false;
  *vid = name.substr(1, name.size() - 6);
  return !vid->empty() && vid->find_first_not_of("0123456789") == std::string::npos;
}

// Whether the names of dir hold a staged version to recover, by recovery.cc's rule: its
// .data with a non-empty .meta (the .meta goes first at a commit, and is empty until the
// OPEN that made it replied).
bool holds_staged_version(int dirfd, const std::set<std::string>& names) {
  for (const std::string& n : names) {
    std::string vid;
    struct stat st;
    if (meta_vid(n, &vid) && names.count("v" + vid + ".data") &&
        fstatat(dirfd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_size > 0)
      return true;
  }
  return false;
}

// Empties dir (a dead session's, its lock held) but for its lock, or only of its read
// views when it holds a staged version to recover: true when emptied.
bool clear_session(const std::string& dir, size_t* views) {
  DIR* d = opendir(dir.c_str());
  if (!d) return false;
  std::set<std::string> names;
  while (dirent* de = readdir(d))
    if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, "lock"))
      names.insert(de->d_name);
  const bool keep_versions = holds_staged_version(dirfd(d), names);
  for (const std::string& n : names) {
    bool view = is_read_view(n.c_str());
    if ((view || !keep_versions) && unlinkat(dirfd(d), n.c_str(), 0) == 0 && view) ++*views;
  }
  closedir(d);
  return !keep_versions;
}

// One other session directory: swept when its forwarder is gone. The lock is held while
// it is looked at, as a forwarder removing its own directory holds it (forwarder.cc), so
// a library starting a forwarder there waits, then finds the lock file gone and starts
// over in a new directory (interpose/client/client_connect.cc).
void sweep_one(const std::string& dir, SweepResult& r) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) return;
  int lock = open((dir + "/lock").c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (lock < 0) return;  // no lock: being set up, or not a session directory
  if (flock(lock, LOCK_EX | LOCK_NB) != 0 || someone_listens(dir + "/sock")) {
    close(lock);
    return;
  }
  size_t views = 0;
  if (clear_session(dir, &views)) {
    unlink((dir + "/lock").c_str());
    if (rmdir(dir.c_str()) == 0) {
      ++r.sessions_removed;
      LOG_INFO("removed %s, the session directory of a forwarder that is gone (%zu read views)",
               dir.c_str(), views);
    }
  } else {
    r.views_removed += views;
    ++r.kept;
    LOG_INFO(
        "%s, the session directory of a forwarder that is gone, holds staged versions "
        "not yet committed: kept for that job's next forwarder (%zu read views removed)",
        dir.c_str(), views);
  }
  close(lock);
}

}  // namespace

SweepResult sweep_dead_sessions(const std::string& stage_root, const std::string& own_dir) {
  SweepResult r;
  const std::string prefix = "ckptfwd-" + std::to_string(geteuid()) + "-";
  DIR* d = opendir(stage_root.c_str());
  if (!d) return r;
  std::vector<std::string> dirs;
  while (dirent* de = readdir(d))
    if (starts_with(de->d_name, prefix.c_str())) dirs.push_back(stage_root + "/" + de->d_name);
  closedir(d);
  for (const std::string& dir : dirs)
    if (dir != own_dir) sweep_one(dir, r);
  return r;
}

}  // namespace ckptfwd::fwd
