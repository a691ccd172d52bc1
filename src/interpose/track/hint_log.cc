#include "interpose/track/hint_log.h"

#include <string.h>

#include <cstdio>
#include <cstdlib>
#include <new>

#include "base/dtype.h"

namespace ckptfwd::interpose {
namespace {

void put_le64(unsigned char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

// Lock held. Appends the in-memory records to the file (creating it), then clears memory.
bool spill(HintLog* x) {
  unsigned char buf[256 * kHintRecordBytes];
  size_t used = 0;
  for (size_t i = 0; i < x->n; ++i) {
    unsigned char* p = buf + used;
    put_le64(p, x->rec[i].offset);
    put_le64(p + 8, x->rec[i].length);
    p[16] = x->rec[i].code;
    used += kHintRecordBytes;
    if (used == sizeof(buf) || i + 1 == x->n) {
      if (!hand_over_append(x->file, buf, used)) return false;
      used = 0;
    }
  }
  x->n = 0;
  for (size_t i = 0; i < x->n_views; ++i)
    if (!hand_over_append(x->file, buf, encode_view_records(x->views[i], buf))) return false;
  x->n_views = 0;
  return true;
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
  x->file.dir = x->dir;
  snprintf(x->file.stem, sizeof(x->file.stem), "h%llu.", vid);
  return x;
}

void hint_log_destroy(HintLog* x, bool remove_file) {
  if (!x) return;
  hand_over_drop(x->file, remove_file);
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

void hint_log_add_view(HintLog* x, const ViewShape& v) {
  pthread_mutex_lock(&x->mu);
  bool known = false;
  for (size_t i = 0; i < x->n_views && !known; ++i) known = x->views[i] == v;
  if (!known && !x->lost) {
    if (x->n_views == kMaxMemViews && !spill(x)) x->lost = true;
    if (!x->lost) x->views[x->n_views++] = v;
  }
  pthread_mutex_unlock(&x->mu);
}

bool hint_log_hand_over(HintLog* x, char* out, size_t cap) {
  pthread_mutex_lock(&x->mu);
  bool any = x->n > 0 || x->n_views > 0 || x->file.fd >= 0;
  bool ok = any && !x->lost && spill(x) && hand_over_give(x->file, out, cap);
  if (!ok) hand_over_drop(x->file);
  x->lost = false;  // a new period starts
  x->n = 0;
  x->n_views = 0;
  pthread_mutex_unlock(&x->mu);
  return ok;
}

}  // namespace ckptfwd::interpose
