// CLOCK_MONOTONIC in nanoseconds: a vDSO call, no system call, no allocation, errno kept
// on success. One definition for the forwarder's timings, the library's blocked time and
// the socket polling (spin_wait.h).
#pragma once
#include <time.h>

#include <cstdint>

namespace ckptfwd {

inline int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace ckptfwd
