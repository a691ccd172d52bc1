#include "restore_paths.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ckptfwd::cli {

namespace {
std::vector<std::string> split(const std::string& p) {
  std::vector<std::string> out;
  size_t b = 1;  // after the leading '/'
  while (b <= p.size()) {
    size_t e = p.find('/', b);
    if (e == std::string::npos) e = p.size();
    out.push_back(p.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

// A directory below the target may be written into when it is ours or root's: another
// user's could have been planted there to catch the restored files (and they control
// what happens to them).
bool trusted_dir(int fd, const std::string& walked, std::string* why) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    if (why) *why = "cannot stat directory " + walked + ": " + strerror(errno);
    return false;
  }
  if (st.st_uid == geteuid() || st.st_uid == 0) return true;
  if (why)
    *why = "refusing to write into directory " + walked + ": it belongs to uid " +
           std::to_string(st.st_uid) + ", not to you (uid " + std::to_string(geteuid()) +
           "). Fix: have its owner remove it, or restore into a directory of yours";
  return false;
}
}  // namespace

bool check_restore_path(const std::string& p, std::string* why) {
  auto bad = [&](const char* w) {
    if (why) *why = w;
    return false;
  };
  if (p.empty() || p[0] != '/') return bad("not an absolute path");
  if (p.find('\0') != std::string::npos) return bad("contains a NUL byte");
  if (p == "/") return bad("is the root directory");
  for (const std::string& c : split(p)) {
    if (c.empty()) return bad("has an empty component (// or a trailing /)");
    if (c == "." || c == "..") return bad("has a '.' or '..' component");
  }
  return true;
}

std::string common_dir_prefix(const std::vector<std::string>& paths) {
  if (paths.empty()) return "";
  std::vector<std::string> common = split(paths[0]);
  common.pop_back();  // directories only
  for (size_t i = 1; i < paths.size(); ++i) {
    std::vector<std::string> c = split(paths[i]);
    c.pop_back();
    size_t k = 0;
    while (k < common.size() && k < c.size() && common[k] == c[k]) ++k;
    common.resize(k);
  }
  std::string out;
  for (const std::string& c : common) out += "/" + c;
  return out;
}

std::string destination_of(const std::string& p, const std::string& prefix, bool full_paths) {
  if (full_paths) return p.substr(1);
  return p.substr(prefix.size() + 1);
}

int open_parent_dir(int root_fd, const std::string& rel, std::string* leaf, std::string* why,
                    const std::string& root_name) {
  int fd = ::dup(root_fd);
  if (fd < 0) {
    if (why) *why = std::string("dup: ") + strerror(errno);
    return -1;
  }
  size_t b = 0;
  std::string walked;
  for (;;) {
    size_t e = rel.find('/', b);
    std::string comp = rel.substr(b, e == std::string::npos ? std::string::npos : e - b);
    // Defence in depth: callers pass checked paths, but this walk alone must never climb.
    if (comp.empty() || comp == "." || comp == ".." || comp.find('\0') != std::string::npos) {
      if (why) *why = "refusing path component '" + comp + "' in " + rel;
      ::close(fd);
      return -1;
    }
    if (e == std::string::npos) {
      *leaf = comp;
      return fd;
    }
    if (walked.empty() && !root_name.empty()) walked = root_name;
    walked += (walked.empty() ? "" : "/") + comp;
    int next = ::openat(fd, comp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT) {
      if (::mkdirat(fd, comp.c_str(), 0777) != 0 && errno != EEXIST) {
        if (why) *why = "cannot create directory " + walked + ": " + strerror(errno);
        ::close(fd);
        return -1;
      }
      next = ::openat(fd, comp.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (next < 0) {
      int e2 = errno;
      if (why) {
        *why = (e2 == ELOOP || e2 == ENOTDIR)
                   ? walked + " is a symlink or not a directory: refusing to write through it"
                   : "cannot open directory " + walked + ": " + strerror(e2);
      }
      ::close(fd);
      return -1;
    }
    if (!trusted_dir(next, walked, why)) {
      ::close(next);
      ::close(fd);
      return -1;
    }
    ::close(fd);
    fd = next;
    b = e + 1;
  }
}

std::string printable(const std::string& p) {
  std::string out;
  for (unsigned char c : p) {
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace ckptfwd::cli
