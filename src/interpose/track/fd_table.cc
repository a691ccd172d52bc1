#include "interpose/track/fd_table.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace ckptfwd::interpose {

Version* version_create(unsigned long long vid, long long budget, unsigned mode, const char* path,
                        const char* staged) {
  if (strlen(path) >= PATH_MAX || strlen(staged) >= PATH_MAX) return nullptr;
  void* mem = malloc(sizeof(Version));
  if (!mem) return nullptr;
  Version* v = new (mem) Version();
  v->vid = vid;
  v->budget = budget;
  v->mode = mode;
  strcpy(v->path, path);
  strcpy(v->staged, staged);
  return v;
}

void version_destroy(Version* v) {
  if (!v) return;
  v->~Version();
  free(v);
}

bool FdTable::init(size_t cap) {
  if (slots_) return true;
  void* mem = mmap(nullptr, cap * sizeof(std::atomic<Version*>), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) return false;
  slots_ = static_cast<std::atomic<Version*>*>(mem);  // zero pages == null pointers
  cap_ = cap;
  return true;
}

bool FdTable::attach(int fd, Version* v, Version** prev) {
  if (prev) *prev = nullptr;
  if (static_cast<unsigned>(fd) >= cap_) return false;
  v->refs.fetch_add(1, std::memory_order_acq_rel);
  Version* old = slots_[fd].exchange(v, std::memory_order_acq_rel);
  int want = fd + 1;
  int cur = high_.load(std::memory_order_relaxed);
  while (cur < want && !high_.compare_exchange_weak(cur, want, std::memory_order_acq_rel)) {
  }
  if (prev) *prev = old;
  return true;
}

Version* FdTable::detach(int fd) {
  if (static_cast<unsigned>(fd) >= cap_) return nullptr;
  if (!slots_[fd].load(std::memory_order_acquire)) return nullptr;
  return slots_[fd].exchange(nullptr, std::memory_order_acq_rel);
}

}  // namespace ckptfwd::interpose
