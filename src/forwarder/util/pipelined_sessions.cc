#include "forwarder/util/pipelined_sessions.h"

#include <sys/ioctl.h>
#include <time.h>

#include "base/monotonic.h"
#include "forwarder/util/log.h"

namespace ckptfwd::fwd {

PipelinedSessions::Entry* PipelinedSessions::join(int fd) {
  std::lock_guard lk(mu_);
  Entry& e = entries_.emplace_back();
  e.fd = fd;
  count_.fetch_add(1);
  return &e;
}

void PipelinedSessions::leave(Entry* e) {
  std::lock_guard lk(mu_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (&*it == e) {
      entries_.erase(it);
      count_.fetch_sub(1);
      return;
    }
}

bool PipelinedSessions::settled(const Entry* self) {
  std::lock_guard lk(mu_);
  for (const Entry& e : entries_) {
    if (&e == self) continue;
    int unread = 0;
    // Unread bytes first, then the flag: a thread raises it before it consumes any.
    if (ioctl(e.fd, FIONREAD, &unread) == 0 && unread > 0) return false;
    if (e.unsettled.load()) return false;
  }
  return true;
}

bool PipelinedSessions::await_others(const Entry* self, int limit_ms) {
  size_t n = count_.load();
  if (n == 0 || (n == 1 && self)) return true;
  const int64_t until = monotonic_ns() + static_cast<int64_t>(limit_ms) * 1000000;
  while (!settled(self)) {
    if (monotonic_ns() > until) {
      LOG_WARN("a client session did not act on its pipelined requests within %d ms: going on",
               limit_ms);
      return false;
    }
    timespec ts{0, 20000};  // 20 us: a leased OPEN takes tens of microseconds
    nanosleep(&ts, nullptr);
  }
  return true;
}

}  // namespace ckptfwd::fwd
