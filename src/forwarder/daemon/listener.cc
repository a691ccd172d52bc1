#include "forwarder/daemon/listener.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ckptfwd::fwd {

namespace {
bool fill_addr(const std::string& path, sockaddr_un& a) {
  memset(&a, 0, sizeof(a));
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof(a.sun_path)) return false;
  memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return true;
}
}  // namespace

int connect_control_socket(const std::string& path) {
  sockaddr_un a;
  if (!fill_addr(path, a)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

BindResult bind_control_socket(const std::string& path, int* fd_out, ino_t* ino, std::string* err) {
  sockaddr_un a;
  if (!fill_addr(path, a)) {
    if (err)
      *err = "socket path too long: " + path + ". Fix: set CKPTFWD_STAGE_DIR to a shorter path";
    return BindResult::kFailed;
  }
  int probe = connect_control_socket(path);
  if (probe >= 0) {
    close(probe);
    return BindResult::kOtherLive;
  }
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      if (err) *err = path + " exists and is not a socket. Fix: remove it";
      return BindResult::kFailed;
    }
    unlink(path.c_str());  // stale: its forwarder is gone
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    if (err) *err = std::string("socket: ") + strerror(errno);
    return BindResult::kFailed;
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    int e = errno;
    close(fd);
    // Lost a race with another forwarder binding the same path: it won.
    if (e == EADDRINUSE) {
      int again = connect_control_socket(path);
      if (again >= 0) {
        close(again);
        return BindResult::kOtherLive;
      }
    }
    if (err) *err = "cannot bind " + path + ": " + strerror(e);
    return BindResult::kFailed;
  }
  if (chmod(path.c_str(), 0600) != 0 || listen(fd, 128) != 0 || lstat(path.c_str(), &st) != 0) {
    if (err) *err = "cannot listen on " + path + ": " + strerror(errno);
    close(fd);
    unlink(path.c_str());
    return BindResult::kFailed;
  }
  *fd_out = fd;
  *ino = st.st_ino;
  return BindResult::kBound;
}

bool peer_is_us(int fd, long* peer_pid) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return false;
  if (peer_pid) *peer_pid = cred.pid;
  return cred.uid == geteuid();  // what SO_PEERCRED reports and what owns our files
}

}  // namespace ckptfwd::fwd
