// fd -> captured file version. An array indexed by fd, mmap'd once at init, so the write
// hot path is one bounds check and one load: untracked fds cost nothing more.
// Several fds (dup, dup2, F_DUPFD) may share one Version; it is reference counted and the
// forwarder hears CLOSE when the last of them goes.
#pragma once
#include <atomic>
#include <climits>
#include <cstddef>

namespace ckptfwd::interpose {

struct ExtentLog;  // extent_log.h
struct HintLog;    // hint_log.h

struct Version {
  unsigned long long vid = 0;
  long long budget = -1;          // bytes the staged file may grow to; -1 unlimited
  unsigned mode = 0600;           // the file's mode (for the real file on fallback)
  std::atomic<int> refs{0};       // fds pointing here
  std::atomic<bool> owned{true};  // false in a forked child: the parent reports it
  std::atomic<bool> close_sent{false};
  std::atomic<bool> abandoned{false};  // switched to the real path
  std::atomic<int> writers{0};         // writes in flight on the staged file
  std::atomic<bool> switching{false};  // a fallback copies the staged bytes right now
  bool view = false;                   // read-only view (vid 0): nothing to hand back
  bool shared = false;                 // shared across nodes (OPEN "shared"): close waits
  bool leased = false;                 // opened on a lease (wire/lease.h)
  unsigned lease_conn = 0;             // on which connection (client_take_lease)
  // st_dev reported for the file (its directory's): found at the first fstat that shows
  // it (version_dev), not at open (a stat per file opened).
  mutable std::atomic<unsigned long long> dev{0};
  char path[PATH_MAX] = {};    // normalised application path
  char staged[PATH_MAX] = {};  // the forwarder's staged file
  // Set for a version committed as an overlay (shared across nodes, or a new file: the
  // forwarder's OPEN reply asks): the byte ranges this process wrote (versions.cc
  // creates and destroys it; the write wrappers record into it).
  ExtentLog* ext = nullptr;
  // Dtype hints of the bytes written by typed MPI writes (hint_log.h); created at the first
  // one, so only processes using typed MPI writes pay anything.
  std::atomic<HintLog*> hints{nullptr};
  // Time the application spent in captured calls on it since its last CLOSE or SYNC
  // (blocked_time.h).
  std::atomic<unsigned long long> blocked_ns{0};
};

// malloc-backed (no C++ runtime needed). Returns nullptr if out of memory or a path is
// too long.
Version* version_create(unsigned long long vid, long long budget, unsigned mode, const char* path,
                        const char* staged);
void version_destroy(Version* v);

class FdTable {
 public:
  constexpr FdTable() = default;
  // Maps room for cap fds (zeroed pages, touched only where used). False if mmap failed.
  bool init(size_t cap);
  size_t capacity() const { return cap_; }

  Version* get(int fd) const {
    if (static_cast<unsigned>(fd) >= cap_) return nullptr;
    return slots_[fd].load(std::memory_order_acquire);
  }
  // Points fd at v (taking a reference). Returns false if fd is outside the table.
  // *prev receives what fd pointed at before (the caller releases it), or nullptr.
  bool attach(int fd, Version* v, Version** prev);
  // Unhooks fd; returns its version (the caller releases it) or nullptr.
  Version* detach(int fd);
  // Drops one reference. True when it was the last one.
  static bool release(Version* v) { return v->refs.fetch_sub(1, std::memory_order_acq_rel) == 1; }
  // One past the highest fd ever attached: bounds full scans (exit, fork, fallback).
  int high_water() const { return high_.load(std::memory_order_acquire); }
  // Every fd in [0, high_water) currently pointing at v.
  template <class F>
  void for_each(F&& f) const {
    int hi = high_water();
    for (int fd = 0; fd < hi; ++fd) {
      Version* v = slots_[fd].load(std::memory_order_acquire);
      if (v) f(fd, v);
    }
  }

 private:
  std::atomic<Version*>* slots_ = nullptr;
  size_t cap_ = 0;
  std::atomic<int> high_{0};
};

}  // namespace ckptfwd::interpose
