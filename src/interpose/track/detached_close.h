// The CLOSE of a version opened on a lease (wire/lease.h), not waited for. A script that
// writes thousands of small files paid a round trip to the forwarder at every close (its
// CLOSE's, and the forwarder's work behind it); now the close returns once the CLOSE is
// written to the socket, and the forwarder acts on it while the application goes on.
//
// What the application can no longer be told at close, and where it goes instead:
// - Close-to-open order: the namespace generation is raised before the close returns
//   (read links made before are not found, wire/read_link.h); this process's next
//   request goes after the CLOSE on the same connection; another process's waits in the
//   forwarder until it was acted on (forwarder/util/pipelined_sessions.h).
// - A CLOSE the forwarder refused (it lost the version in a restart): its reply is read
//   later (before the next waited request goes out, at the next leased open, exit, exec)
//   and the staged bytes are written to the real path then, as a waited close does at
//   once (keep_staged_at_close); other processes see the previous version until then.
//   A connection lost before the reply: the CLOSE is sent again, waited, on the next one.
// - Only while the node's forwarder is alone in its group (activity::kAloneOffset): a
//   request from another node's forwarder does not wait for this node's sessions.
// - Neither possible (the real path cannot be written): logged as an ERROR naming the
//   staged file that keeps the bytes, and the process's exit status is non-zero
//   (interpose/client/exit_wait.h) where it was 0, as for a checkpoint left uncommitted.
// At most kMaxDetached such CLOSEs are in flight; more close as before (waited).
// Allocation free: a fixed table of slots (each holds the version's paths: a resend or a
// fallback after the Version is gone).
#pragma once
#include <cstddef>

#include "interpose/track/fd_table.h"

namespace ckptfwd::interpose {

// Sends CLOSE for v (fields as close_version built them, without "nowait") unwaited.
// True when sent: the close is done as far as the application is concerned. False when it
// must be waited for (v not leased, shared, no slot free, not connected).
bool close_detached(const Version* v, const char* const* fields, size_t n);
// Reads every detached CLOSE's reply and acts on it (at exit, before exec).
void settle_detached_closes();
// Detached CLOSEs whose bytes reached neither the forwarder nor the real path.
long detached_close_losses();
// In a forked child: the parent's detached CLOSEs are the parent's.
void detached_close_atfork_child();

}  // namespace ckptfwd::interpose
