#include "checked_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ckpt_writer {

void die(const char* op, const std::string& path) {
  std::fprintf(stderr, "ckpt_writer: %s %s: %s\n", op, path.c_str(), std::strerror(errno));
  std::exit(1);
}

int xopen(const std::string& path, int flags, mode_t mode) {
  int fd = ::open(path.c_str(), flags, mode);
  if (fd < 0) die("open", path);
  return fd;
}

void xwrite_all(int fd, const void* buf, size_t n, const std::string& path) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) die("write", path);
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void xpwrite_all(int fd, const void* buf, size_t n, off_t off, const std::string& path) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, n, off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) die("pwrite", path);
    p += w;
    off += w;
    n -= static_cast<size_t>(w);
  }
}

void xwritev_all(int fd, const struct iovec* iov, int cnt, const std::string& path) {
  size_t want = 0;
  for (int i = 0; i < cnt; ++i) want += iov[i].iov_len;
  ssize_t w = ::writev(fd, iov, cnt);
  // A short writev on a regular file only happens on ENOSPC-like conditions: report it.
  if (w < 0 || static_cast<size_t>(w) != want) die("writev (short or failed)", path);
}

void xclose(int fd, const std::string& path) {
  if (::close(fd) != 0) die("close", path);
}

std::string join(const std::string& dir, const std::string& name) {
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

}  // namespace ckpt_writer
