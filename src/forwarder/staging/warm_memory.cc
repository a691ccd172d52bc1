#include "forwarder/staging/warm_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <thread>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels refuse it (EINVAL)
#endif

namespace ckptfwd::fwd::warm {

namespace {
struct Region {
  void* p;
  uint64_t len;
};

// None of these is destroyed at exit (std::mutex and the integers are trivially
// destructible; the list is allocated once and never freed): prepare()'s thread is
// detached, so it may still be giving a region back while the process exits (the
// forwarder's main returning, a unit test's process ending), and a static destructor
// would free the list under it, with nothing ordering the two.
std::mutex g_mu;
std::deque<Region>& g_kept = *new std::deque<Region>;  // oldest first
uint64_t g_kept_bytes = 0;
uint64_t g_cap = 128ull << 20;
std::atomic<bool> g_preparing{false};

bool fits(const Region& r, uint64_t want) { return r.len >= want && r.len / 2 <= want; }

// Index of the best-fitting kept region (the smallest that fits), or -1. Under g_mu.
long best_fit(uint64_t want) {
  long best = -1;
  for (size_t i = 0; i < g_kept.size(); ++i)
    if (fits(g_kept[i], want) && (best < 0 || g_kept[i].len < g_kept[best].len))
      best = static_cast<long>(i);
  return best;
}

// Fresh anonymous memory with its pages faulted in, or nullptr.
void* faulted_region(uint64_t len) {
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  madvise(p, len, MADV_HUGEPAGE);  // fewer faults, where allowed
  if (madvise(p, len, MADV_POPULATE_WRITE) != 0) {
    // A kernel without MADV_POPULATE_WRITE: one write per page.
    volatile uint8_t* b = static_cast<uint8_t*>(p);
    for (uint64_t off = 0; off < len; off += 4096) b[off] = 0;
  }
  return p;
}
}  // namespace

void set_cap(uint64_t bytes) {
  std::lock_guard<std::mutex> g(g_mu);
  g_cap = bytes;
}

bool has(uint64_t want) {
  std::lock_guard<std::mutex> g(g_mu);
  return best_fit(want) >= 0;
}

void* take(uint64_t want, uint64_t* len) {
  std::lock_guard<std::mutex> g(g_mu);
  long i = best_fit(want);
  if (i < 0) return nullptr;
  Region r = g_kept[static_cast<size_t>(i)];
  g_kept.erase(g_kept.begin() + i);
  g_kept_bytes -= r.len;
  *len = r.len;
  return r.p;
}

void give(void* p, uint64_t len) {
  madvise(p, len, MADV_FREE);
  std::vector<Region> drop;
  {
    std::lock_guard<std::mutex> g(g_mu);
    if (len > g_cap) {
      drop.push_back({p, len});
    } else {
      g_kept.push_back({p, len});
      g_kept_bytes += len;
      while (g_kept_bytes > g_cap) {
        drop.push_back(g_kept.front());
        g_kept_bytes -= g_kept.front().len;
        g_kept.pop_front();
      }
    }
  }
  for (const Region& r : drop) munmap(r.p, r.len);
}

namespace {
// The sizes of `sizes` that no kept region serves and that fit in what the cap leaves.
std::vector<uint64_t> unserved(const std::vector<uint64_t>& sizes) {
  std::lock_guard<std::mutex> g(g_mu);
  uint64_t room = g_cap > g_kept_bytes ? g_cap - g_kept_bytes : 0;
  std::vector<uint64_t> wanted;
  for (uint64_t n : sizes) {
    if (n == 0 || n > room || best_fit(n) >= 0) continue;
    wanted.push_back(n);
    room -= n;
  }
  return wanted;
}

void fault_and_keep(const std::vector<uint64_t>& sizes) {
  for (uint64_t n : sizes)
    if (void* p = faulted_region(n)) give(p, n);
}
}  // namespace

void prepare(std::vector<uint64_t> sizes) {
  sizes = unserved(sizes);
  if (sizes.empty() || g_preparing.exchange(true)) return;
  try {
    std::thread([sizes = std::move(sizes)] {
      fault_and_keep(sizes);
      g_preparing = false;
    }).detach();
  } catch (...) {  // no thread: the next snapshot reads in place again
    g_preparing = false;
  }
}

void prepare_now(std::vector<uint64_t> sizes) { fault_and_keep(unserved(sizes)); }

uint64_t kept_bytes() {
  std::lock_guard<std::mutex> g(g_mu);
  return g_kept_bytes;
}

bool preparing() { return g_preparing.load(); }

void drop_all() {
  std::lock_guard<std::mutex> g(g_mu);
  for (const Region& r : g_kept) munmap(r.p, r.len);
  g_kept.clear();
  g_kept_bytes = 0;
}

}  // namespace ckptfwd::fwd::warm
