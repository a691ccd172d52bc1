// The time the application spends inside captured calls on a version (its writes, the
// flushes of its stdio writes, its fsyncs and closes): the checkpoint cost C of the
// interval advice (docs/cli.md, "How often to checkpoint"). Only the library sees it; it goes
// to the forwarder with the version's next CLOSE or SYNC ("blocked=<ns>", protocol.h),
// and the forwarder adds what it measures itself (the time it keeps a CLOSE, SYNC or the
// exit wait waiting). Only calls on captured fds are timed: one clock_gettime
// (CLOCK_MONOTONIC, a vDSO call, no system call) before and after; errno is kept.
#pragma once
#include <errno.h>

#include "base/monotonic.h"
#include "interpose/track/activity_clock.h"
#include "interpose/track/fd_table.h"

namespace ckptfwd::interpose {

inline unsigned long long blocked_clock_ns() {
  return static_cast<unsigned long long>(monotonic_ns());
}

// Adds the time from its construction to its destruction to v->blocked_ns, and tells the
// forwarder the application is writing (activity_clock.h).
class BlockedTimer {
 public:
  explicit BlockedTimer(Version* v) : v_(v), start_(blocked_clock_ns()) {}
  ~BlockedTimer() {
    int saved = errno;
    unsigned long long end = blocked_clock_ns();
    v_->blocked_ns.fetch_add(end - start_, std::memory_order_relaxed);
    note_activity(end);
    errno = saved;
  }
  BlockedTimer(const BlockedTimer&) = delete;
  BlockedTimer& operator=(const BlockedTimer&) = delete;

 private:
  Version* v_;
  unsigned long long start_;
};

// "blocked=<ns>" of the time v's calls took since the last hand-over (taken: it starts
// again from zero) into field (cap >= 40). False, nothing taken, when there is none.
bool hand_over_blocked(Version* v, char* field, size_t cap);

}  // namespace ckptfwd::interpose
