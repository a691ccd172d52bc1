#include "interpose/setup/cwd_cache.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <atomic>

namespace ckptfwd::interpose {
namespace {

std::atomic<unsigned> g_seq{0};  // odd while a refresh writes
std::atomic<bool> g_trusted{false};
std::atomic<bool> g_writing{false};  // one refresh at a time (chdir is rare)
char g_cwd[PATH_MAX];
std::atomic<size_t> g_len{0};

void write_copy() {
  int saved = errno;
  char now[PATH_MAX];
  bool ok = getcwd(now, sizeof(now)) != nullptr && now[0] == '/';
  g_seq.fetch_add(1, std::memory_order_acq_rel);  // odd: readers back off
  size_t n = ok ? strlen(now) : 0;
  if (ok) memcpy(g_cwd, now, n + 1);
  g_len.store(n, std::memory_order_relaxed);
  g_trusted.store(ok, std::memory_order_relaxed);
  g_seq.fetch_add(1, std::memory_order_release);
  errno = saved;
}

}  // namespace

size_t cwd_copy(char* out, unsigned* generation) {
  unsigned s1 = g_seq.load(std::memory_order_acquire);
  if ((s1 & 1) || !g_trusted.load(std::memory_order_relaxed)) return 0;
  size_t n = g_len.load(std::memory_order_relaxed);
  if (n == 0 || n >= PATH_MAX) return 0;
  memcpy(out, g_cwd, n);
  out[n] = '\0';
  std::atomic_thread_fence(std::memory_order_acquire);
  if (g_seq.load(std::memory_order_relaxed) != s1) return 0;
  if (generation) *generation = s1;
  return n;
}

unsigned cwd_generation() {
  unsigned s = g_seq.load(std::memory_order_acquire);
  return (s & 1) || !g_trusted.load(std::memory_order_relaxed) ? 0 : s;
}

void cwd_refresh() {
  while (g_writing.exchange(true, std::memory_order_acquire)) {
  }
  write_copy();
  g_writing.store(false, std::memory_order_release);
}

void cwd_distrust() { g_trusted.store(false, std::memory_order_relaxed); }

void cwd_atfork_child() {
  // The only thread now: a refresh another thread of the parent was in never finishes.
  g_writing.store(false, std::memory_order_relaxed);
  if (g_seq.load(std::memory_order_relaxed) & 1) g_seq.fetch_add(1, std::memory_order_relaxed);
  if (g_trusted.load(std::memory_order_relaxed)) write_copy();
}

}  // namespace ckptfwd::interpose
