// Waiting on the library-forwarder socket for the other side's next frame.
//
// A reply to OPEN or CLOSE comes back in tens of microseconds; sleeping in recv for it
// costs a wake-up on both sides (a cross-CPU interrupt each way, the dearer part of a
// round trip in a virtual machine: writing 10,000 small files spent most of the
// forwarder's time in them). So the waiter first polls the socket, without reading it,
// for a short while, but only while the frames keep arriving within that while: after
// a few in a row that took longer (the other side busy, the cores oversubscribed, an
// application computing between its calls) it sleeps at once, until a wait is short
// again. (Stopping at the first long wait halved the gain: the odd slow reply, a batch
// being picked meanwhile, is common.)
//
// Allocation free and dependency free: the preload library uses it inside wrapped calls.
#pragma once
#include <cstdint>

namespace ckptfwd::wire {

class SpinWait {
 public:
  // cap_us: how long one wait polls at most (CKPTFWD_SPIN_US); 0: never.
  void set_cap_us(int64_t cap_us) { cap_ns_ = cap_us > 0 ? cap_us * 1000 : 0; }
  // Before the blocking read of a frame on fd: polls until fd is readable (data, end of
  // stream or an error), the cap has passed, or at once when the last wait took longer
  // than the cap. Returns when the wait began, for done(). errno is preserved.
  int64_t poll(int fd);
  // After the frame (or its first bytes) arrived: the wait that began at `began` decides
  // whether the next one polls.
  void done(int64_t began);
  bool polls_next() const { return cap_ns_ > 0 && misses_ < kMaxMisses; }

 private:
  static constexpr int kMaxMisses = 4;  // waits in a row longer than the cap
  int64_t cap_ns_ = 0;
  int misses_ = 0;
};

}  // namespace ckptfwd::wire
