// The process's main connection to the forwarder and the requests on it: call() under the
// connection lock with one reconnect, call_waiting() on connections of their own, and what
// exec and fork do with them. Reaching the forwarder (connect, election, start) is
// client_connect.cc's, one exchange on a socket client_io.cc's.
#include "interpose/client/client.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "interpose/client/client_connect.h"
#include "interpose/client/client_io.h"
#include "interpose/setup/state.h"
#include "interpose/track/activity_clock.h"
#include "interpose/wrap/real.h"
#include "wire/lease.h"
#include "wire/spin_wait.h"

namespace ckptfwd::interpose {
namespace {

// The connection lock: guards the main connection and the state of client_connect.h.
pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
std::atomic<int> g_sock{-1};
dev_t g_sock_dev = 0;
ino_t g_sock_ino = 0;
bool g_unreachable = false;
std::atomic<bool> g_closed_any{false};
char g_frame[wire::kMaxFrame + 1];  // one frame in flight, guarded by g_mu
// Replies read ahead on the main connection (wire/read_ahead.h), guarded by g_mu: reset
// whenever the connection is replaced or given up.
char g_ahead_buf[16 * 1024];
wire::ReadAhead g_ahead(g_ahead_buf, sizeof(g_ahead_buf));
wire::SpinWait g_spin;  // how the main connection waits for replies, under g_mu

// Leased opens (wire/lease.h), under g_mu: the leases the main connection was handed
// (g_leases below; g_conn_gen counts connections), and the replies owed for
// requests sent without waiting, read before the next request's, in the order they were
// sent: kNoSlot for a leased OPEN's (its errors show at that file's CLOSE), else the slot
// of a detached request, whose outcome goes to g_detached_fn (g_done until then: the
// handler runs outside the lock). Owed detached replies and outcomes not handed on yet
// together stay within kMaxDetached.
constexpr unsigned kNoSlot = ~0u;
constexpr int kMaxOwed = 2 * static_cast<int>(kMaxDetached);
constexpr int kMaxDone = static_cast<int>(kMaxDetached);
// The leases in hand, oldest first, all of connection g_conn_gen (the forwarder hands a
// few ahead: ClientCtx::kLeasesAhead).
constexpr int kMaxLeases = 4;
wire::Lease g_leases[kMaxLeases];
int g_lease_n = 0;
unsigned g_conn_gen = 0;
unsigned g_owed_slot[kMaxOwed];
int g_owed_first = 0, g_owed = 0, g_owed_detached = 0;
struct Outcome {
  unsigned slot;
  Result res;
};
Outcome g_done[kMaxDone];
int g_done_n = 0;
DetachedFn g_detached_fn = nullptr;

void push_outcome_locked(unsigned slot, Result res) {
  if (g_done_n < kMaxDone) g_done[g_done_n++] = {slot, res};
}

// The oldest owed reply was read (res) or will never be (the connection is gone).
void pop_owed_locked(Result res) {
  unsigned slot = g_owed_slot[g_owed_first];
  g_owed_first = (g_owed_first + 1) % kMaxOwed;
  --g_owed;
  if (slot != kNoSlot) {
    --g_owed_detached;
    push_outcome_locked(slot, res);
  }
}

// The connection is gone or replaced: a detached request's reply will not come (its
// handler sends it again, waiting, on the next connection).
void forget_pipeline_locked() {
  g_ahead.reset();
  g_lease_n = 0;
  while (g_owed > 0) pop_owed_locked(Result{});
}

bool drain_owed_locked(int fd, bool ready_only = false, bool until_lease = false,
                       bool checked = true);
bool connected_locked();

void drop_connection_locked() {
  int fd = g_sock.exchange(-1);
  // Replies already there (the forwarder answered, then died) are read first: an OK a
  // detached CLOSE got stands, and is not sent again to a forwarder that never knew it.
  if (fd >= 0 && g_owed > 0) drain_owed_locked(fd, true);
  if (fd >= 0) real::close()(fd);
  forget_pipeline_locked();
}

// A lease in the last field of an OK reply to OPEN or CLOSE.
void note_lease_locked(const wire::Fields& reply) {
  if (reply.n < 2 || strcmp(reply[0], wire::kOk) != 0) return;
  wire::Lease l;
  if (!wire::parse_lease(reply[reply.n - 1], l)) return;
  if (g_lease_n < kMaxLeases) g_leases[g_lease_n++] = l;
}

Result result_of(const wire::Fields& reply);

// Reads the replies owed on fd, all of them, or (ready_only) those already there, or
// (until_lease) until one handed a lease over. Unless checked, the socket is looked at
// (connected_locked) before it is read: replies read ahead are taken without.
bool drain_owed_locked(int fd, bool ready_only, bool until_lease, bool checked) {
  while (g_owed > 0 && !(until_lease && g_lease_n > 0)) {
    const bool here = g_ahead.has_frame();
    // Reading the socket, not the bytes already read from it: it must still be ours.
    if (!here && !checked) {
      if (!connected_locked()) return false;
      checked = true;
    }
    if (ready_only && !here) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 0) != 1 || !(p.revents & POLLIN)) return true;
    }
    wire::Fields reply;
    char* payload = nullptr;
    size_t len = 0;
    int64_t began = ready_only || here ? 0 : g_spin.poll(fd);
    if (!receive_ahead(fd, g_ahead, g_frame, sizeof(g_frame), nullptr, &payload, &len, reply))
      return false;
    if (began) g_spin.done(began);
    pop_owed_locked(result_of(reply));
    note_lease_locked(reply);
  }
  return true;
}

// Hands the outcomes read to the handler, outside the lock, one at a time and in order
// (two refusals of one path must not write its real file at once); it may call() again:
// the outcomes that call reads are handed on by this loop, not by a nested one.
std::atomic<bool> g_delivering{false};
void deliver_outcomes() {
  if (g_delivering.exchange(true)) return;
  for (;;) {
    pthread_mutex_lock(&g_mu);
    if (g_done_n == 0 || !g_detached_fn) {
      pthread_mutex_unlock(&g_mu);
      break;
    }
    Outcome o = g_done[0];
    memmove(g_done, g_done + 1, sizeof(Outcome) * static_cast<size_t>(--g_done_n));
    DetachedFn fn = g_detached_fn;
    pthread_mutex_unlock(&g_mu);
    fn(o.slot, o.res);
  }
  g_delivering.store(false);
}

size_t g_reply_len = 0;   // payload length of the reply in g_reply
char* g_reply = g_frame;  // g_frame, or g_big for a reply larger than it
char* g_big = nullptr;    // malloc'd for a large reply (LIST), freed at the next one

bool exchange_locked(int fd, const char* const* fields, size_t n, wire::Fields& reply) {
  if (g_big) {
    free(g_big);
    g_big = nullptr;
  }
  g_reply = g_frame;
  g_reply_len = 0;
  auto grow = [](size_t need) { return g_big = static_cast<char*>(malloc(need)); };
  g_spin.set_cap_us(g_settings.spin_us);
  // Replies owed to leased OPENs come first on the stream: the request goes out before
  // they are read, so the forwarder finds it the moment it is done with those.
  if (!send_request(fd, fields, n, g_frame, sizeof(g_frame)) || !drain_owed_locked(fd))
    return false;
  int64_t began = g_ahead.has_frame() ? 0 : g_spin.poll(fd);
  if (!receive_ahead(fd, g_ahead, g_frame, sizeof(g_frame), grow, &g_reply, &g_reply_len, reply))
    return false;
  if (began) g_spin.done(began);
  // Nothing was sent after this request: bytes past its reply mean the stream is out of step.
  return g_ahead.empty();
}

// fd becomes the main connection: its identity is what connected_locked checks (a
// connection of call_waiting's must never change it).
void set_main_socket_locked(int fd) {
  struct stat st {};
  if (real::fstat()(fd, &st) == 0) {
    g_sock_dev = st.st_dev;
    g_sock_ino = st.st_ino;
  }
  g_sock.store(fd);
  ++g_conn_gen;
  forget_pipeline_locked();
  remap_activity_clock();
}

bool connected_locked() {
  int fd = g_sock.load();
  if (fd < 0) {
    // The application closed our socket (client_fd_gone): no reply owed on it will come.
    if (g_owed > 0) forget_pipeline_locked();
    return false;
  }
  // The application may have closed our fd and reused its number: check it is still ours.
  struct stat st {};
  if (real::fstat()(fd, &st) != 0 || st.st_dev != g_sock_dev || st.st_ino != g_sock_ino ||
      !S_ISSOCK(st.st_mode)) {
    g_sock.store(-1);
    forget_pipeline_locked();
    return false;
  }
  return true;
}

bool ensure_connected_locked() {
  if (connected_locked()) return true;
  if (g_unreachable) return false;
  if (!g_settings.session_ok) {
    snprintf(g_reason, sizeof(g_reason), "session paths too long (shorten CKPTFWD_STAGE_DIR)");
    g_unreachable = true;
    return false;
  }
  int fd = reach_forwarder();
  if (fd < 0) {
    g_unreachable = true;
    return false;
  }
  set_main_socket_locked(fd);
  return true;
}

// The result a reply means: OK, PASS, or ERR with its errno (EIO if it carried none).
Result result_of(const wire::Fields& reply) {
  Result res;
  if (strcmp(reply[0], wire::kOk) == 0) {
    res.status = Status::kOk;
  } else if (strcmp(reply[0], wire::kPass) == 0) {
    res.status = Status::kPass;
  } else {
    long long e = 0;
    res.status = Status::kErr;
    res.err = wire::parse_i64(reply[1], e) && e > 0 ? static_cast<int>(e) : EIO;
  }
  return res;
}

// With g_mu held: reads every reply owed to a detached request and hands their outcomes
// on (the lock released meanwhile).
void settle_detached_locked() {
  if (g_owed_detached == 0 || !connected_locked()) return;
  if (!drain_owed_locked(g_sock.load())) drop_connection_locked();
  pthread_mutex_unlock(&g_mu);
  deliver_outcomes();
  pthread_mutex_lock(&g_mu);
}

}  // namespace

Result call(const char* const* fields, size_t n, ReplyFn on_ok, void* ctx) {
  Busy busy;
  Result res;
  pthread_mutex_lock(&g_mu);
  // A detached CLOSE refused meanwhile is acted on (its file written to the real path)
  // before this request, which may be about that file, goes out.
  settle_detached_locked();
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!ensure_connected_locked()) break;
    wire::Fields reply;
    if (!exchange_locked(g_sock.load(), fields, n, reply)) {
      drop_connection_locked();
      if (errno == ETIMEDOUT) {  // stopped (sock_read): a new connection would hang too
        snprintf(g_reason, sizeof(g_reason),
                 "the forwarder is stopped (SIGSTOP?) and did not answer for %d s",
                 kStoppedLimitMs / 1000);
        g_unreachable = true;
        res = Result{};
        break;
      }
      // The forwarder went away mid-session; reconnect once (it may be restarting).
      continue;
    }
    res = result_of(reply);
    if (!strcmp(fields[0], wire::kOpen) || !strcmp(fields[0], wire::kClose))
      note_lease_locked(reply);
    if (res.status == Status::kOk && on_ok) on_ok(reply, ctx);
    break;
  }
  pthread_mutex_unlock(&g_mu);
  deliver_outcomes();
  return res;
}

bool client_take_lease(wire::Lease* out, unsigned* conn) {
  pthread_mutex_lock(&g_mu);
  // The next lease is in a reply owed to an earlier request that went unwaited (a leased
  // OPEN's hands the next one over): waited for, as a waited OPEN would wait for those
  // replies first and then for its own.
  // Replies read ahead already need no look at the socket (connected_locked, done before
  // the socket is read).
  if (g_lease_n == 0 && g_owed > 0 && g_sock.load() >= 0 &&
      !drain_owed_locked(g_sock.load(), false, true, false))
    drop_connection_locked();
  bool got = g_lease_n > 0 && g_sock.load() >= 0;
  if (got) {
    *out = g_leases[0];
    *conn = g_conn_gen;
    memmove(g_leases, g_leases + 1, sizeof(wire::Lease) * static_cast<size_t>(--g_lease_n));
  }
  pthread_mutex_unlock(&g_mu);
  deliver_outcomes();
  return got;
}

void client_put_back_lease(const wire::Lease& l, unsigned conn) {
  pthread_mutex_lock(&g_mu);
  if (conn == g_conn_gen && g_lease_n < kMaxLeases) {
    memmove(g_leases + 1, g_leases, sizeof(wire::Lease) * static_cast<size_t>(g_lease_n++));
    g_leases[0] = l;
  }
  pthread_mutex_unlock(&g_mu);
}

namespace {
// Sends a request whose reply is owed (slot: kNoSlot, or the detached request's), on
// connection conn if it is still the main one.
bool send_unwaited(const char* const* fields, size_t n, unsigned conn, unsigned slot) {
  Busy busy;
  pthread_mutex_lock(&g_mu);
  bool sent = false;
  if (conn == g_conn_gen && connected_locked() &&
      (slot == kNoSlot || g_owed_detached + g_done_n < kMaxDone)) {
    int fd = g_sock.load();
    // A full queue of owed replies: the oldest are read first (the forwarder is behind).
    if (g_owed == kMaxOwed && !drain_owed_locked(fd)) {
      drop_connection_locked();
    } else {
      sent = send_request(fd, fields, n, g_frame, sizeof(g_frame));
      if (sent) {
        g_owed_slot[(g_owed_first + g_owed++) % kMaxOwed] = slot;
        if (slot != kNoSlot) ++g_owed_detached;
      } else {
        drop_connection_locked();
      }
    }
  }
  pthread_mutex_unlock(&g_mu);
  deliver_outcomes();
  return sent;
}
}  // namespace

bool call_leased(const char* const* fields, size_t n, unsigned conn) {
  return send_unwaited(fields, n, conn, kNoSlot);
}

void client_set_detached_handler(DetachedFn fn) {
  pthread_mutex_lock(&g_mu);
  g_detached_fn = fn;
  pthread_mutex_unlock(&g_mu);
}

bool call_detached(const char* const* fields, size_t n, unsigned conn, unsigned slot) {
  return slot < kMaxDetached && send_unwaited(fields, n, conn, slot);
}

void client_settle_detached() {
  pthread_mutex_lock(&g_mu);
  settle_detached_locked();
  pthread_mutex_unlock(&g_mu);
  deliver_outcomes();  // (what a lost connection left: connected_locked)
}

namespace {
// Connections of their own for requests that wait for a commit (call_waiting), kept for
// the next one. Each is checked before use: the application may have closed its number.
struct Spare {
  int fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;
};
constexpr int kMaxSpares = 4;
pthread_mutex_t g_spare_mu = PTHREAD_MUTEX_INITIALIZER;
Spare g_spares[kMaxSpares];
int g_spare_count = 0;

bool spare_is_ours(const Spare& sp) {
  struct stat st {};
  return real::fstat()(sp.fd, &st) == 0 && st.st_dev == sp.dev && st.st_ino == sp.ino &&
         S_ISSOCK(st.st_mode);
}

// A kept connection, or a new one (connected under g_mu: it shares the session checks and
// g_reason with the main connection). fd -1 when none can be had.
Spare take_spare() {
  Spare sp;
  pthread_mutex_lock(&g_spare_mu);
  while (g_spare_count > 0) {
    sp = g_spares[--g_spare_count];
    if (spare_is_ours(sp)) break;
    sp.fd = -1;  // its number is the application's now: forget it, never close it
  }
  pthread_mutex_unlock(&g_spare_mu);
  if (sp.fd >= 0) return sp;
  pthread_mutex_lock(&g_mu);
  if (ensure_connected_locked()) {
    sp.fd = try_connect();
    struct stat st {};
    if (sp.fd >= 0 && real::fstat()(sp.fd, &st) == 0) {
      sp.dev = st.st_dev;
      sp.ino = st.st_ino;
    } else if (sp.fd >= 0) {
      real::close()(sp.fd);
      sp.fd = -1;
    }
  }
  pthread_mutex_unlock(&g_mu);
  return sp;
}

void give_back(const Spare& sp) {
  pthread_mutex_lock(&g_spare_mu);
  bool kept = g_spare_count < kMaxSpares;
  if (kept) g_spares[g_spare_count++] = sp;
  pthread_mutex_unlock(&g_spare_mu);
  if (!kept) real::close()(sp.fd);
}
}  // namespace

Result call_waiting(const char* const* fields, size_t n) {
  Busy busy;
  Spare sp = take_spare();
  if (sp.fd < 0) return call(fields, n);  // reports why the forwarder is unreachable
  char buf[2 * PATH_MAX + 512];
  wire::Fields reply;
  if (!exchange_small(sp.fd, fields, n, buf, sizeof(buf), reply)) {
    // The forwarder went away meanwhile (or the reply was unusable): the main connection
    // reconnects once, as for any call.
    real::close()(sp.fd);
    return call(fields, n);
  }
  Result res = result_of(reply);
  give_back(sp);
  return res;
}

const char* unreachable_reason() { return g_reason; }

void client_refuse(const char* why) {
  pthread_mutex_lock(&g_mu);
  drop_connection_locked();
  refuse(why);
  g_unreachable = true;
  pthread_mutex_unlock(&g_mu);
}

bool client_refused() {
  pthread_mutex_lock(&g_mu);
  bool refused = g_refused;
  pthread_mutex_unlock(&g_mu);
  return refused;
}

void client_forget_unreachable() {
  pthread_mutex_lock(&g_mu);
  if (!g_refused) g_unreachable = false;
  pthread_mutex_unlock(&g_mu);
}

void reply_payload(const char** data, size_t* len) {
  *data = g_reply;
  *len = g_reply_len;
}
bool client_closed_any() { return g_closed_any.load(); }
void client_note_closed() { g_closed_any.store(true); }

void client_fd_gone(int fd) {
  int expected = fd;
  if (fd >= 0 && g_sock.load(std::memory_order_relaxed) == fd)
    g_sock.compare_exchange_strong(expected, -1);
}

int client_socket() {
  pthread_mutex_lock(&g_mu);
  int fd = connected_locked() ? g_sock.load() : -1;
  // The new image reads replies from here on: none may be owed to this one.
  if (fd >= 0 && !drain_owed_locked(fd)) {
    drop_connection_locked();
    fd = -1;
  }
  pthread_mutex_unlock(&g_mu);
  deliver_outcomes();
  return fd;
}

bool client_adopt_socket(int fd) {
  struct stat st {};
  if (real::fstat()(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
  real::fcntl()(fd, F_SETFD, FD_CLOEXEC);
  pthread_mutex_lock(&g_mu);
  g_sock_dev = st.st_dev;
  g_sock_ino = st.st_ino;
  g_sock.store(fd);
  g_closed_any.store(true);  // versions the old image closed still count for WAITALL
  pthread_mutex_unlock(&g_mu);
  return true;
}

void client_atfork_child() {
  pthread_mutex_init(&g_mu, nullptr);
  g_big = nullptr;  // the parent's (copy-on-write) buffer: leaked, never freed twice
  g_reply = g_frame;
  // The parent's conversation is the parent's: the child says HELLO with its own pid.
  int fd = g_sock.exchange(-1);
  if (fd >= 0) real::close()(fd);
  // The parent's owed replies and their outcomes are the parent's to act on.
  g_ahead.reset();
  g_lease_n = 0;
  g_owed = g_owed_first = g_owed_detached = g_done_n = 0;
  g_closed_any.store(false);
  // The parent's waiting connections too (one a parent thread had taken stays open here,
  // unused: its number may be one the application uses).
  pthread_mutex_init(&g_spare_mu, nullptr);
  for (int i = 0; i < g_spare_count; ++i)
    if (spare_is_ours(g_spares[i])) real::close()(g_spares[i].fd);
  g_spare_count = 0;
}

}  // namespace ckptfwd::interpose
