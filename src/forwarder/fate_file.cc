#include "forwarder/fate_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "forwarder/log.h"

namespace ckptfwd::fwd {
namespace {

using fate::Fate;

std::string file_of(const std::string& dir, const std::string& path) {
  char buf[PATH_MAX + 32];
  return fate::fate_file(dir.c_str(), path.c_str(), buf, sizeof(buf)) ? buf : std::string();
}

Fate read_fate(const std::string& file, const std::string& path, long* pid) {
  int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Fate::kNone;
  char text[PATH_MAX + 64];
  ssize_t n = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  if (n <= 0) return Fate::kNone;
  text[n] = '\0';
  return fate::parse_fate(text, path.c_str(), pid);
}

// Writes the fate under a temporary name of ours; "" if it cannot.
std::string write_temp(const std::string& dir, Fate f, const std::string& path) {
  char text[PATH_MAX + 64];
  size_t len = fate::fate_text(f, static_cast<long>(getpid()), path.c_str(), text, sizeof(text));
  std::string tmp = dir + "/fate.tmp.fwd." + std::to_string(getpid());
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return "";
  bool ok = len > 0 && ::write(fd, text, len) == static_cast<ssize_t>(len);
  if (::close(fd) != 0) ok = false;
  if (!ok) {
    ::unlink(tmp.c_str());
    return "";
  }
  return tmp;
}

}  // namespace

Fate claim_staged_fate(const std::string& session_dir, const std::string& path) {
  std::string file = file_of(session_dir, path);
  if (file.empty()) return Fate::kStaged;
  long pid = 0;
  Fate now = read_fate(file, path, &pid);
  if (now == Fate::kDirect) return Fate::kDirect;
  if (now == Fate::kStaged && pid == static_cast<long>(getpid())) return Fate::kStaged;
  std::string tmp = write_temp(session_dir, Fate::kStaged, path);
  if (tmp.empty()) {
    LOG_WARN("cannot record the fate of %s in %s: %s", path.c_str(), session_dir.c_str(),
             strerror(errno));
    return Fate::kStaged;
  }
  Fate got = Fate::kStaged;
  if (now == Fate::kNone && ::link(tmp.c_str(), file.c_str()) == 0) {
    // claimed: the first one
  } else if (now == Fate::kNone && errno == EEXIST &&
             read_fate(file, path, nullptr) == Fate::kDirect) {
    got = Fate::kDirect;  // a library claimed it direct just now
  } else {
    // A claim of a forwarder that is gone (we restarted) or an unreadable file: ours.
    ::rename(tmp.c_str(), file.c_str());
  }
  ::unlink(tmp.c_str());
  return got;
}

void make_fate_direct(const std::string& session_dir, const std::string& path) {
  std::string file = file_of(session_dir, path);
  std::string tmp = file.empty() ? "" : write_temp(session_dir, Fate::kDirect, path);
  if (tmp.empty() || ::rename(tmp.c_str(), file.c_str()) != 0) {
    LOG_WARN("cannot record in %s that %s is written directly: %s", session_dir.c_str(),
             path.c_str(), strerror(errno));
    if (!tmp.empty()) ::unlink(tmp.c_str());
  }
}

void release_staged_fate(const std::string& session_dir, const std::string& path) {
  std::string file = file_of(session_dir, path);
  long pid = 0;
  if (!file.empty() && read_fate(file, path, &pid) == Fate::kStaged &&
      pid == static_cast<long>(getpid()))
    ::unlink(file.c_str());
}

bool fate_is_direct(const std::string& session_dir, const std::string& path) {
  std::string file = file_of(session_dir, path);
  return !file.empty() && read_fate(file, path, nullptr) == Fate::kDirect;
}

}  // namespace ckptfwd::fwd
