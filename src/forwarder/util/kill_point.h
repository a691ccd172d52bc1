// Deterministic fault injection for the fault-injection tests (tests/faults/): the
// forwarder kills itself with SIGKILL at a named step when CKPTFWD_TEST_KILL_AT names it,
// so a test stops it exactly between two actions instead of sleeping and hoping. It fires
// once per session: the first time it leaves a marker file in the session directory, and a
// forwarder restarted in the same session (which inherits the variable) runs on.
//
// Steps:
//   open-copy   a write open is about to copy the path's current bytes into staging
//   sync-copy   an fsync is about to make the open version's snapshot (a second name of
//               its staged file, or a copy)
//   close-done  a CLOSE has been recorded, before its reply
//   waitall     a process's exit wait (WAITALL) has arrived, before it waits
#pragma once
#include <string>

namespace ckptfwd::fwd {

void kill_point(const std::string& session_dir, const char* step);

}  // namespace ckptfwd::fwd
