// One connected client: read a frame, run its verb, send the reply, until it hangs up.
#pragma once
#include <cstdint>

#include "forwarder/verbs/service.h"

namespace ckptfwd::fwd {
// Runs on the connection's own thread; returns when the peer hangs up or breaks the
// protocol. Calls Service::disconnect at the end (its open versions are closed). Does not
// close fd. spin_us: how long it polls for the next request before it sleeps, while they
// keep coming that fast (CKPTFWD_SPIN_US, wire/spin_wait.h).
void serve_client(Service& svc, int fd, uint64_t client_id, long peer_pid, int spin_us);
}  // namespace ckptfwd::fwd
