#include "interpose/hint_log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "base/dtype.h"
#include "interpose/real.h"

namespace ckptfwd::interpose {
namespace {

std::atomic<unsigned> g_seq{0};

bool path_of(const HintLog* x, char* out, size_t cap) {
  int n = snprintf(out, cap, "%s/%s", x->dir, x->name);
  return n > 0 && static_cast<size_t>(n) < cap;
}

void put_le64(unsigned char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

bool write_all(int fd, const unsigned char* p, size_t left) {
  while (left) {
    ssize_t w = real::write()(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    left -= static_cast<size_t>(w);
  }
  return true;
}

// Lock held. Appends the in-memory records to the file (creating it), then clears memory.
bool spill(HintLog* x) {
  if (x->fd < 0) {
    snprintf(x->name, sizeof(x->name), "h%llu.%d.%u", x->vid, static_cast<int>(getpid()),
             g_seq.fetch_add(1));
    char path[PATH_MAX];
    if (!path_of(x, path, sizeof(path))) return false;
    x->fd = real::open()(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (x->fd < 0) return false;
  }
  unsigned char buf[256 * kHintRecordBytes];
  size_t used = 0;
  for (size_t i = 0; i < x->n; ++i) {
    unsigned char* p = buf + used;
    put_le64(p, x->rec[i].offset);
    put_le64(p + 8, x->rec[i].length);
    p[16] = x->rec[i].code;
    used += kHintRecordBytes;
    if (used == sizeof(buf) || i + 1 == x->n) {
      if (!write_all(x->fd, buf, used)) return false;
      used = 0;
    }
  }
  x->n = 0;
  return true;
}

void drop_file(HintLog* x) {
  if (x->fd < 0) return;
  real::close()(x->fd);
  x->fd = -1;
  char path[PATH_MAX];
  if (path_of(x, path, sizeof(path))) real::unlink()(path);
}

}  // namespace

HintLog* hint_log_create(unsigned long long vid, const char* dir) {
  if (!dir || strlen(dir) >= sizeof(HintLog::dir)) return nullptr;
  void* mem = malloc(sizeof(HintLog));
  void* rec = malloc(kMaxMemHints * sizeof(HintRecord));
  if (!mem || !rec) {
    free(mem);
    free(rec);
    return nullptr;
  }
  HintLog* x = new (mem) HintLog();
  x->vid = vid;
  x->rec = static_cast<HintRecord*>(rec);
  strcpy(x->dir, dir);
  return x;
}

void hint_log_destroy(HintLog* x, bool remove_file) {
  if (!x) return;
  if (remove_file) drop_file(x);
  else if (x->fd >= 0) real::close()(x->fd);
  free(x->rec);
  pthread_mutex_destroy(&x->mu);
  x->~HintLog();
  free(x);
}

void hint_log_add(HintLog* x, uint64_t off, uint64_t len, uint8_t code) {
  if (!len || code == 0 || code > kMaxDtypeCode) return;
  pthread_mutex_lock(&x->mu);
  if (!x->lost) {
    HintRecord* last = x->n ? &x->rec[x->n - 1] : nullptr;
    if (last && last->code == code && last->offset + last->length == off) {
      last->length += len;  // a sequential typed write continues the previous record
    } else {
      if (x->n >= kMaxMemHints && !spill(x)) x->lost = true;
      if (!x->lost) x->rec[x->n++] = HintRecord{off, len, code};
    }
  }
  pthread_mutex_unlock(&x->mu);
}

bool hint_log_hand_over(HintLog* x, char* out, size_t cap) {
  pthread_mutex_lock(&x->mu);
  bool any = x->n > 0 || x->fd >= 0;
  bool ok = any && !x->lost && spill(x) && strlen(x->name) < cap;
  if (ok) {
    strcpy(out, x->name);
    real::close()(x->fd);  // handed over: the forwarder owns (and deletes) the file now
    x->fd = -1;
  } else {
    drop_file(x);
  }
  x->lost = false;  // a new period starts
  x->n = 0;
  pthread_mutex_unlock(&x->mu);
  return ok;
}

}  // namespace ckptfwd::interpose
