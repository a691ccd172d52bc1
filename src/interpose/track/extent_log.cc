#include "interpose/track/extent_log.h"

#include <errno.h>
#include <string.h>

#include <cstdio>
#include <cstdlib>
#include <new>

#include "interpose/setup/state.h"

namespace ckptfwd::interpose {
namespace {

// Lock held. Appends the in-memory run to the file (creating it), then clears memory.
bool spill(ExtentLog* x) {
  // Little-endian on disk; x86-64 and aarch64 are little-endian already.
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "extents files are little-endian");
  if (!hand_over_append(x->file, x->set.iv, x->set.n * sizeof(x->set.iv[0]))) {
    if (x->file.fd < 0)
      log_msg("cannot create the extents file %s/%s: %s", x->file.dir, x->file.name,
              strerror(errno));
    else
      log_msg("cannot write the extents file %s of %s: %s", x->file.name, x->file.dir,
              strerror(errno));
    return false;
  }
  extent_set_clear(x->set);
  return true;
}

}  // namespace

ExtentLog* extent_log_create(unsigned long long vid) {
  void* mem = malloc(sizeof(ExtentLog));
  if (!mem) return nullptr;
  ExtentLog* x = new (mem) ExtentLog();
  x->vid = vid;
  x->file.dir = g_settings.session.dir;
  snprintf(x->file.stem, sizeof(x->file.stem), "v%llu.ext.", vid);
  return x;
}

void extent_log_destroy(ExtentLog* x, bool remove_file) {
  if (!x) return;
  hand_over_drop(x->file, remove_file);
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
  bool ok = !x->lost && spill(x) && hand_over_give(x->file, out, cap);
  if (!ok) hand_over_drop(x->file);
  x->lost = false;  // a new period starts (what was lost is reported with this hand-over)
  extent_set_clear(x->set);
  pthread_mutex_unlock(&x->mu);
  return ok;
}

bool extent_log_hand_over_prefix(ExtentLog* x, char* out, size_t cap) {
  pthread_mutex_lock(&x->mu);
  bool prefix =
      !x->lost && x->file.fd < 0 && (x->set.n == 0 || (x->set.n == 1 && x->set.iv[0][0] == 0));
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
