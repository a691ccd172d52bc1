#include "interpose/client/client_io.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "interpose/client/client.h"
#include "interpose/wrap/real.h"
#include "wire/proc_state.h"

namespace ckptfwd::interpose {
namespace {

long sock_write(int fd, const void* p, size_t n) { return send(fd, p, n, MSG_NOSIGNAL); }
// A forwarder that is stopped (SIGSTOP, a debugger) would hang the application's calls
// for good: a reply that has not come after kStoppedLimitMs (client_io.h), while the
// forwarder was found stopped at every check, fails the read (ETIMEDOUT) and the call then
// goes on as with a forwarder that is gone (reconnect, then the fallback to the real file).
// A forwarder that is merely busy (a commit an fsync or the exit wait waits for) is waited
// for without limit. The checks cost nothing while replies come: the socket's receive
// timeout (kCheckMs, set at connect) wakes the read only when one is late.
constexpr int kCheckMs = 1000;

// The state letter of the forwarder at the other end of fd ('?' when unknown).
char peer_state(int fd) {
  struct ucred cred {};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) return '?';
  return proc_state::read_state(cred.pid, real::open(), real::close());
}

long sock_read(int fd, void* p, size_t n) {
  int stopped_ms = 0;
  for (;;) {
    long r = recv(fd, p, n, 0);
    if (r >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) return r;
    char st = peer_state(fd);
    stopped_ms = proc_state::stopped(st) ? stopped_ms + kCheckMs : 0;
    if (stopped_ms >= kStoppedLimitMs) {
      errno = ETIMEDOUT;
      return -1;
    }
  }
}

// The lowest descriptor of the library's own: above the range applications use (and
// dup2 onto).
int high_fd_base() {
  rlimit rl{};
  long base = 900;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      static_cast<long>(rl.rlim_cur) < 1024)
    base = static_cast<long>(rl.rlim_cur) / 2;
  return static_cast<int>(base);
}

}  // namespace

// sock_read wakes up by it.
void set_check_timeout(int fd) {
  timeval tv{kCheckMs / 1000, (kCheckMs % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

int move_high(int fd) {
  int hi = real::fcntl()(fd, F_DUPFD_CLOEXEC, high_fd_base());
  if (hi < 0) return fd;
  real::close()(fd);
  return hi;
}

void reserve_high_fds() {
  int saved = errno;
  int fd = real::open()("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    int hi = real::fcntl()(fd, F_DUPFD_CLOEXEC, high_fd_base());
    if (hi >= 0) real::close()(hi);
    real::close()(fd);
  }
  errno = saved;
}

bool send_request(int fd, const char* const* fields, size_t n, char* buf, size_t cap) {
  size_t out = wire::encode(buf, cap - 1, fields, n);
  return out != 0 && wire::send_frame(fd, buf, out, sock_write);
}

bool receive_ahead(int fd, wire::ReadAhead& ra, char* buf, size_t cap, wire::BigFn big,
                   char** payload, size_t* len, wire::Fields& reply) {
  if (!ra.take(fd, sock_read, wire::kMaxReplyFrame, buf, cap, big, payload, len)) return false;
  // A LIST reply may carry more names than Fields holds (kMaxFields): decode then keeps
  // the first ones and the caller walks the whole payload (reply_payload()).
  wire::decode(*payload, *len, reply);
  return reply.n > 0;
}

bool receive_reply(int fd, char* buf, size_t cap, wire::BigFn big, char** payload, size_t* len,
                   wire::Fields& reply) {
  if (!wire::recv_reply(fd, buf, cap, sock_read, big, payload, len)) return false;
  // A LIST reply may carry more names than Fields holds (kMaxFields): decode then keeps
  // the first ones and the caller walks the whole payload (reply_payload()).
  wire::decode(*payload, *len, reply);
  return reply.n > 0;
}

bool exchange_small(int fd, const char* const* fields, size_t n, char* buf, size_t cap,
                    wire::Fields& reply) {
  char* payload = nullptr;
  size_t len = 0;
  auto refuse_big = [](size_t) -> char* { return nullptr; };
  // These wait for a commit (or are a connection's first HELLO): sleeping at once.
  return send_request(fd, fields, n, buf, cap) &&
         receive_reply(fd, buf, cap, refuse_big, &payload, &len, reply);
}

}  // namespace ckptfwd::interpose
