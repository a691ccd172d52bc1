#include "interpose/track/handover_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "interpose/wrap/real.h"

namespace ckptfwd::interpose {
namespace {

// The <seq> of the names this process makes: with its pid, unique in the session dir.
std::atomic<unsigned> g_seq{0};

bool path_of(const HandOverFile& f, char* out, size_t cap) {
  int n = snprintf(out, cap, "%s/%s", f.dir, f.name);
  return n > 0 && static_cast<size_t>(n) < cap;
}

bool create(HandOverFile& f) {
  snprintf(f.name, sizeof(f.name), "%s%d.%u", f.stem, static_cast<int>(getpid()),
           g_seq.fetch_add(1));
  char path[PATH_MAX];
  if (!path_of(f, path, sizeof(path))) {
    errno = ENAMETOOLONG;
    return false;
  }
  f.fd = real::open()(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  return f.fd >= 0;
}

}  // namespace

bool hand_over_append(HandOverFile& f, const void* p, size_t n) {
  if (f.fd < 0 && !create(f)) return false;
  const char* at = static_cast<const char*>(p);
  while (n) {
    ssize_t w = real::write()(f.fd, at, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return false;
    }
    at += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool hand_over_give(HandOverFile& f, char* out, size_t cap) {
  if (f.fd < 0 || strlen(f.name) >= cap) return false;
  strcpy(out, f.name);
  real::close()(f.fd);
  f.fd = -1;
  return true;
}

void hand_over_drop(HandOverFile& f, bool remove) {
  if (f.fd < 0) return;
  real::close()(f.fd);
  f.fd = -1;
  char path[PATH_MAX];
  if (remove && path_of(f, path, sizeof(path))) real::unlink()(path);
}

}  // namespace ckptfwd::interpose
