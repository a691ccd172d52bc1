// The exit wait: before a process that closed captured files ends, the forwarder confirms
// they are committed to the store, or the process says they are not.
//
// A forwarder lost while the process waits (killed, crashed, its node's memory short) is
// found or started again, and its successor recovers the staged versions and commits them
// (forwarder/daemon/recovery.cc); a store that refuses the commit (full, read-only) is asked
// again. Both are retried with backoff for CKPTFWD_EXIT_RETRY_S seconds of failures in
// all; a forwarder that is busy committing is waited for without a limit, as before.
// What is still not committed then stays staged (a later `ckptfwd drain` of the job on
// the node commits it, and exits non-zero until it has) and is logged; the caller makes
// the process's exit status non-zero (kNotCommittedStatus) where it was 0.
#pragma once

namespace ckptfwd::interpose {

// EX_TEMPFAIL of sysexits.h: what a process that exited 0 exits with instead when its
// checkpoint files are not on the store.
constexpr int kNotCommittedStatus = 75;

// Waits as above. True when every version this process closed is committed (or there was
// nothing to wait for); false after logging which files are not and where they are.
bool wait_for_commits_at_exit();

}  // namespace ckptfwd::interpose
