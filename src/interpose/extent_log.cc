#include "interpose/extent_log.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "interpose/real.h"
#include "interpose/state.h"

namespace ckptfwd::interpose {
namespace {

std::atomic<unsigned> g_seq{0};

bool path_of(const ExtentLog* x, char* out, size_t cap) {
  int n = snprintf(out, cap, "%s/%s", g_settings.session.dir, x->name);
  return n > 0 && static_cast<size_t>(n) < cap;
}

// Lock held. Appends the in-memory run to the file (creating it), then clears memory.
bool spill(ExtentLog* x) {
  if (x->fd < 0) {
    snprintf(x->name, sizeof(x->name), "v%llu.ext.%d.%u", x->vid, static_cast<int>(getpid()),
             g_seq.fetch_add(1));
    char path[PATH_MAX];
    if (!path_of(x, path, sizeof(path))) return false;
    x->fd = real::open()(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (x->fd < 0) {
      log_msg("cannot create the extents file %s: %s", path, strerror(errno));
      return false;
    }
  }
  // Little-endian on disk; x86-64 and aarch64 are little-endian already.
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "extents files are little-endian");
  const char* p = reinterpret_cast<const char*>(x->set.iv);
  size_t left = x->set.n * sizeof(x->set.iv[0]);
  while (left) {
    ssize_t w = real::write()(x->fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      log_msg("cannot write the extents file %s of %s: %s", x->name, g_settings.session.dir,
              strerror(w < 0 ? errno : EIO));
      return false;
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  extent_set_clear(x->set);
  return true;
}

void drop_file(ExtentLog* x) {
  if (x->fd < 0) return;
  real::close()(x->fd);
  x->fd = -1;
  char path[PATH_MAX];
  if (path_of(x, path, sizeof(path))) real::unlink()(path);
}

}  // namespace

ExtentLog* extent_log_create(unsigned long long vid) {
  void* mem = malloc(sizeof(ExtentLog));
  if (!mem) return nullptr;
  ExtentLog* x = new (mem) ExtentLog();
  x->vid = vid;
  return x;
}

void extent_log_destroy(ExtentLog* x, bool remove_file) {
  if (!x) return;
  if (remove_file)
    drop_file(x);
  else if (x->fd >= 0)
    real::close()(x->fd);
  extent_set_free(x->set);
  pthread_mutex_destroy(&x->mu);
  x->~ExtentLog();
  free(x);
}

void extent_log_add(ExtentLog* x, uint64_t off, uint64_t len) {
  if (!len) return;
  pthread_mutex_lock(&x->mu);
  if (!x->lost) {
    if (x->set.n >= kMaxMemIntervals && !spill(x)) x->lost = true;
    if (!x->lost && !extent_set_add(x->set, off, off + len)) {
      log_msg("out of memory recording the extents of v%llu", x->vid);
      x->lost = true;
    }
  }
  pthread_mutex_unlock(&x->mu);
}

void extent_log_mark_lost(ExtentLog* x) {
  pthread_mutex_lock(&x->mu);
  x->lost = true;
  pthread_mutex_unlock(&x->mu);
}

bool extent_log_hand_over(ExtentLog* x, char* out, size_t cap) {
  pthread_mutex_lock(&x->mu);
  bool ok = !x->lost && spill(x) && strlen(x->name) < cap;
  if (ok) {
    strcpy(out, x->name);
    real::close()(x->fd);  // handed over: the forwarder owns (and deletes) the file now
    x->fd = -1;
  } else {
    drop_file(x);
  }
  x->lost = false;  // a new period starts (what was lost is reported with this hand-over)
  extent_set_clear(x->set);
  pthread_mutex_unlock(&x->mu);
  return ok;
}

bool extent_log_hand_over_prefix(ExtentLog* x, char* out, size_t cap) {
  pthread_mutex_lock(&x->mu);
  bool prefix = !x->lost && x->fd < 0 && (x->set.n == 0 || (x->set.n == 1 && x->set.iv[0][0] == 0));
  if (prefix) {
    unsigned long long end = x->set.n ? x->set.iv[0][1] : 0;
    int n = snprintf(out, cap, "whole=%llu", end);
    prefix = n > 0 && static_cast<size_t>(n) < cap;
    if (prefix) extent_set_clear(x->set);
  }
  pthread_mutex_unlock(&x->mu);
  return prefix;
}

}  // namespace ckptfwd::interpose
