// What the capture globs need of the working directory, kept per cwd_generation(): the
// globs whose literal prefix can begin a path below it (CaptureSet::below_mask) and its
// length. A relative path is then tested against those prefixes beyond the directory
// (CaptureSet::may_match_relative) without copying the directory and joining the path to
// it: the common uncaptured relative open costs one compare. Computed again after each
// directory change (the generation moves).
#pragma once
#include <atomic>
#include <cstddef>

namespace ckptfwd::interpose {

class CwdFilter {
 public:
  // True, with the mask and the directory's length, if the filter holds generation gen.
  bool get(unsigned gen, unsigned long long& mask, size_t& dir_len) const {
    const unsigned s1 = seq_.load(std::memory_order_acquire);
    if (s1 & 1) return false;  // being written
    const unsigned g = gen_.load(std::memory_order_relaxed);
    mask = mask_.load(std::memory_order_relaxed);
    dir_len = len_.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    return seq_.load(std::memory_order_relaxed) == s1 && g == gen && gen != 0;
  }
  // Keeps them for gen. A writer that finds another one writing leaves it (never waits:
  // a signal handler's open may interrupt a write in its own thread).
  void put(unsigned gen, unsigned long long mask, size_t dir_len) {
    if (writing_.exchange(true, std::memory_order_acquire)) return;
    seq_.fetch_add(1, std::memory_order_acq_rel);  // odd: readers back off
    gen_.store(gen, std::memory_order_relaxed);
    mask_.store(mask, std::memory_order_relaxed);
    len_.store(dir_len, std::memory_order_relaxed);
    seq_.fetch_add(1, std::memory_order_release);
    writing_.store(false, std::memory_order_release);
  }
  // In a forked child, the only thread: a write another thread of the parent was in
  // never finishes. Forget the filter (it is computed again at the next relative path).
  void reset_after_fork() {
    gen_.store(0, std::memory_order_relaxed);
    if (seq_.load(std::memory_order_relaxed) & 1) seq_.fetch_add(1, std::memory_order_relaxed);
    writing_.store(false, std::memory_order_relaxed);
  }

 private:
  std::atomic<unsigned> seq_{0};
  std::atomic<unsigned> gen_{0};
  std::atomic<unsigned long long> mask_{0};
  std::atomic<size_t> len_{0};
  std::atomic<bool> writing_{false};
};

extern CwdFilter g_cwd_filter;

}  // namespace ckptfwd::interpose
