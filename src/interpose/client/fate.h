// The library's side of a captured path's fate (wire/fate.h): whether this process may
// write the path through staging or must write it directly like every other process of
// the node and job. Used at open, fallback and close time only, never on the write path.
#pragma once

namespace ckptfwd::interpose {

// True if some process of this node and job writes norm directly: this process's write
// opens of norm must too. One open(2) when there is no fate file (the common case).
bool fate_is_direct(const char* norm);
// Before this process writes norm directly without the forwarder's consent: records the
// direct fate. False while a live forwarder holds the staged fate (another process writes
// norm through staging): writing directly now would split the file, so the caller fails
// the call instead. True as well when the session directory is not usable at all
// (nobody can stage into it).
bool claim_direct_fate(const char* norm);
// Test-only switch: CKPTFWD_TEST_FALLBACK_PID names this process, whose write opens then
// behave as if the forwarder were unreachable (tests/faults/test_fate_*.sh).
bool test_forced_fallback();

}  // namespace ckptfwd::interpose
