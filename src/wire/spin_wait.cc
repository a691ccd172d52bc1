#include "wire/spin_wait.h"

#include <sys/socket.h>

#include <cerrno>

#include "base/monotonic.h"

namespace ckptfwd::wire {

int64_t SpinWait::poll(int fd) {
  int64_t began = monotonic_ns();
  if (!polls_next()) return began;
  int saved = errno;
  // MSG_PEEK: the frame stays for the caller's read, and taking nothing from the socket
  // does not wake the sender as a read would (the socket's wait queue is shared).
  char c;
  while (recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) < 0 && (errno == EAGAIN || errno == EINTR) &&
         monotonic_ns() - began < cap_ns_) {
  }
  errno = saved;
  return began;
}

void SpinWait::done(int64_t began) {
  if (monotonic_ns() - began <= cap_ns_)
    misses_ = 0;
  else if (misses_ < kMaxMisses)
    ++misses_;
}

}  // namespace ckptfwd::wire
