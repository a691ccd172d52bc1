#include "interpose/track/detached_close.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "interpose/client/client.h"
#include "interpose/setup/state.h"
#include "interpose/track/activity_clock.h"
#include "interpose/track/versions.h"
#include "interpose/wrap/real.h"
#include "wire/lease.h"

namespace ckptfwd::interpose {
namespace {

// What a resend or a fallback needs once the Version is gone.
struct Slot {
  bool used = false;
  unsigned mode = 0;
  size_t n = 0;         // fields of the CLOSE, "nowait" not counted
  char fields[6][128];  // the CLOSE's fields (verb, vid, size, trailing ones)
  char path[PATH_MAX];
  char staged[PATH_MAX];
};
static_assert(sizeof(Slot::fields[0]) >= 112, "a CLOSE's trailing field must fit");

pthread_mutex_t g_slots_mu = PTHREAD_MUTEX_INITIALIZER;
Slot g_slots[kMaxDetached];
std::atomic<long> g_losses{0};

void release_slot(unsigned i) {
  pthread_mutex_lock(&g_slots_mu);
  g_slots[i].used = false;
  pthread_mutex_unlock(&g_slots_mu);
}

// The forwarder answered (res), or the connection went before it could.
void on_outcome(unsigned i, Result res) {
  if (i >= kMaxDetached) return;
  Slot& s = g_slots[i];
  const bool resent = res.status == Status::kUnreachable;
  if (resent) {
    // Sent again, waited for, on the next connection: a forwarder that recovered the
    // version says OK, one that never saw it ESTALE (as for a waited close's resend).
    const char* req[6];
    for (size_t k = 0; k < s.n; ++k) req[k] = s.fields[k];
    res = call(req, s.n);
  }
  // OK; or refused after a resend with its staged file gone: the lost connection's
  // forwarder took it (committed it, which removes the staged file) before it could
  // answer. (client_note_closed was said when it was sent.)
  if (res.status == Status::kOk || (resent && res.status == Status::kErr && res.err == ESTALE &&
                                    real::access()(s.staged, F_OK) != 0 && errno == ENOENT)) {
    release_slot(i);
    return;
  }
  char why[400];
  if (res.status == Status::kErr)
    snprintf(why, sizeof(why), "forwarder refused its close (it lost the version: %s)",
             strerror(res.err));
  else
    snprintf(why, sizeof(why), "forwarder unreachable after its close (%s)", unreachable_reason());
  if (!keep_staged_at_close(s.path, s.staged, s.mode, why)) g_losses.fetch_add(1);
  release_slot(i);
}

}  // namespace

bool close_detached(const Version* v, const char* const* fields, size_t n) {
  if (!v->leased || v->shared || v->view || n > 5 || !g_settings.detached_close) return false;
  // Another node's request would not wait for this CLOSE (only this forwarder's sessions
  // do): unwaited only while no other node's forwarder is in the group.
  map_activity_clock();
  if (!forwarder_alone()) return false;
  int saved = errno;
  unsigned i = 0;
  pthread_mutex_lock(&g_slots_mu);
  while (i < kMaxDetached && g_slots[i].used) ++i;
  bool fits = i < kMaxDetached;
  for (size_t k = 0; fits && k < n; ++k) fits = strlen(fields[k]) < sizeof(g_slots[i].fields[k]);
  if (fits) g_slots[i].used = true;
  pthread_mutex_unlock(&g_slots_mu);
  if (!fits) return false;
  Slot& s = g_slots[i];
  s.mode = v->mode;
  s.n = n;
  const char* req[6];
  for (size_t k = 0; k < n; ++k) {
    strcpy(s.fields[k], fields[k]);
    req[k] = s.fields[k];
  }
  req[n] = wire::kCloseNoWait;
  strcpy(s.path, v->path);
  strcpy(s.staged, v->staged);
  // The handler is set before the first CLOSE that needs it (once: a store of the same
  // pointer after that changes nothing).
  static std::atomic<bool> handler_set{false};
  if (!handler_set.exchange(true)) client_set_detached_handler(on_outcome);
  // Read links made while the version was open show the bytes it replaces: not found any
  // more from now on (the forwarder raises the generation again when it acts on the CLOSE).
  raise_namespace();
  bool sent = call_detached(req, n + 1, v->lease_conn, i);
  if (sent)
    client_note_closed();  // the exit's WAITALL waits for it
  else
    release_slot(i);
  errno = saved;
  return sent;
}

void settle_detached_closes() { client_settle_detached(); }

long detached_close_losses() { return g_losses.load(); }

void detached_close_atfork_child() {
  pthread_mutex_init(&g_slots_mu, nullptr);
  for (Slot& s : g_slots) s.used = false;
  g_losses.store(0);
}

}  // namespace ckptfwd::interpose
