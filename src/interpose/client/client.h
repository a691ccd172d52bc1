// The library's one connection to the node's forwarder: request, then reply, under a
// mutex. Connects lazily, starts the forwarder if nobody has (election by flock), and
// remembers for the rest of the process when the forwarder cannot be reached.
#pragma once
#include <errno.h>

#include <cstddef>

#include "wire/lease.h"
#include "wire/protocol.h"

namespace ckptfwd::interpose {

enum class Status { kUnreachable, kOk, kPass, kErr };

struct Result {
  Status status = Status::kUnreachable;
  int err = 0;  // errno from an ERR reply (EIO if it carried none)
};

// How a wrapper takes the reply (status, err) to its request about a captured path, saved
// being the application's errno from before the wrapper ran: -1 with errno = err when the
// forwarder failed the request (kErr: the wrapper fails); 0 with errno = saved when it is
// not the forwarder's to do (kPass, kUnreachable: the real call follows); 1 when the
// forwarder did it, errno untouched (the wrapper goes on, and gives saved back when it
// succeeds).
inline int take_reply(Status status, int err, int saved) {
  if (status == Status::kOk) return 1;
  errno = status == Status::kErr ? err : saved;
  return status == Status::kErr ? -1 : 0;
}

// Called with the reply's fields while the connection lock is held (the fields point into
// the shared frame buffer): copy out what is needed.
using ReplyFn = void (*)(const wire::Fields& reply, void* ctx);

// Inside a ReplyFn: the whole reply payload (fields separated by NUL, the first is the
// status), for replies with more fields than wire::Fields holds (LIST).
void reply_payload(const char** data, size_t* len);

Result call(const char* const* fields, size_t n, ReplyFn on_ok = nullptr, void* ctx = nullptr);

// At init: grows the process's descriptor table past the library's descriptors
// (move_high puts its sockets at 900 or above). Growing it later, in a process with
// threads (an MPI rank's), makes the kernel wait for an RCU grace period: 10-15 ms of
// the first checkpoint's open on the test machine; now, before the application's threads
// exist, it costs microseconds, and a table never shrinks.
void reserve_high_fds();

// At the library's start (CKPTFWD_EARLY_START): starts the node's forwarder if no process
// has, without waiting for it to listen, so that the first checkpoint's open finds it ready
// instead of starting it. Costs the process the exec of ckptfwd-launch and its exit (a few
// ms, only while no forwarder's socket exists). No connection is made; nothing is reported
// (the first call does both). The forwarder stays while this process lives, even before it
// connects.
void start_forwarder_early();

// call() for a request that waits in the forwarder until something is committed (SYNC):
// sent on a connection of its own, so the waiting thread does not hold the connection
// lock and the other threads' opens and closes go on meanwhile. No reply fields.
Result call_waiting(const char* const* fields, size_t n);

template <class F>
Result call_with(const char* const* fields, size_t n, F& on_ok) {
  return call(
      fields, n, [](const wire::Fields& r, void* c) { (*static_cast<F*>(c))(r); }, &on_ok);
}

// Leased opens (wire/lease.h). The lease the main connection was handed, if any, taken
// for one open (*conn: which connection it belongs to); then the OPEN that uses it, sent
// on that connection without waiting (its reply is read before the next request's).
// False when that connection is gone (the lease with it) or the send failed: the caller
// undoes what it did for the lease and asks with call() instead.
bool client_take_lease(wire::Lease* out, unsigned* conn);
// A lease taken and not used (nothing was sent for it): kept for the next open, unless
// its connection is gone or another lease came meanwhile.
void client_put_back_lease(const wire::Lease& l, unsigned conn);
bool call_leased(const char* const* fields, size_t n, unsigned conn);

// Detached requests (a CLOSE on a lease, wire/lease.h): sent without waiting, and their
// outcome handed to the handler later, outside the connection lock, by whichever thread
// next reads replies (any call, a lease taken, client_settle_detached): what the reply
// said, or kUnreachable when the connection was lost first (the forwarder may or may not
// have acted on it). slot (below kMaxDetached) is the caller's record of the request.
// Sent only on connection conn (client_take_lease's): the forwarder's session on another
// one may not pipeline, so other sessions would not wait for it. False (nothing sent,
// nothing handed on) when conn is not the main connection any more, when kMaxDetached are
// owed or not handed on yet, or the send failed: the caller asks with call() instead.
inline constexpr unsigned kMaxDetached = 32;
using DetachedFn = void (*)(unsigned slot, Result res);
void client_set_detached_handler(DetachedFn fn);
bool call_detached(const char* const* fields, size_t n, unsigned conn, unsigned slot);
// Reads every reply owed to a detached request and hands their outcomes on (at exit,
// before an exec, before a wait that must see them acted on).
void client_settle_detached();

// Why the forwarder could not be reached ("" if it could).
const char* unreachable_reason();
// Stops using the forwarder for the rest of the process (it answered with something the
// library must not act on, interpose/setup/trust.h): logs why, later calls are kUnreachable.
void client_refuse(const char* why);
// True once the session was refused (above, or a planted directory or socket): no retry
// can reach a forwarder.
bool client_refused();
// Forgets that the forwarder could not be reached, so that the next call connects to (or
// starts) one again; a refusal stays. The exit wait outlasts a forwarder lost more than
// once with it (interpose/client/exit_wait.h); everywhere else an unreachable forwarder stays
// unreachable for the process, whose files then go to their real paths.
void client_forget_unreachable();
// True once this process handed over (CLOSE) at least one version on its connection.
bool client_closed_any();
void client_note_closed();
// The application closed or dup'd over fd: if it was our socket, forget it.
void client_fd_gone(int fd);
// The connected socket (verified), or -1: exec hands it to the new image.
int client_socket();
// The new image after exec adopts the socket its predecessor used (already said HELLO).
bool client_adopt_socket(int fd);

}  // namespace ckptfwd::interpose
