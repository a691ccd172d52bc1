// Extents of a version whose OPEN reply asked for them ("x": shared across nodes, or a new
// file): what this process wrote into it, handed to the forwarder as a file in the session
// dir when the process's last fd of the version closes (CLOSE vid size FILE) or at fsync
// (SYNC vid FILE).
//
// The file, `<session dir>/v<vid>.ext.<pid>.<seq>` (0600), is little-endian u64 pairs
// [begin, end): one or more runs, each sorted and disjoint (protocol.h). Memory stays
// bounded without ever over-covering (an over-covered gap would commit this node's stale
// copy of bytes another node wrote): past kMaxMemIntervals the in-memory run is appended
// to the file and memory starts afresh; the forwarder merges the runs.
#pragma once
#include <pthread.h>

#include <cstddef>
#include <cstdint>

#include "interpose/track/extent_set.h"
#include "interpose/track/handover_file.h"

namespace ckptfwd::interpose {

inline constexpr size_t kMaxMemIntervals = 65536;

struct ExtentLog {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  unsigned long long vid = 0;
  ExtentSet set;
  HandOverFile file;  // created at the first spill or hand-over
  bool lost = false;  // a record or spill failed: this process's extents are unknown
};

ExtentLog* extent_log_create(unsigned long long vid);
// Frees the memory; removes a file never handed over when remove_file (false in a forked
// child, whose copy of the state names the parent's file).
void extent_log_destroy(ExtentLog* x, bool remove_file = true);
// Some bytes were written where they cannot be placed: this period's extents are unknown.
void extent_log_mark_lost(ExtentLog* x);
// Records [off, off+len) as written.
void extent_log_add(ExtentLog* x, uint64_t off, uint64_t len);
// Writes what was recorded since the last hand-over into its file, closes it and puts its
// base name in out (cap bytes). The next records start a new file. False when the
// extents are unknown (a failure was logged): send CLOSE/SYNC without a file then, and
// the forwarder falls back to the staged file's data extents.
bool extent_log_hand_over(ExtentLog* x, char* out, size_t cap);
// At CLOSE, instead of a file: when what was recorded since the last hand-over is one run
// from byte 0 (or nothing) and nothing was spilled to a file, puts "whole=<end of the run>"
// ("whole=0": nothing written) in out and starts a new period, as a hand-over does. A
// file written front to back, the common case, then costs no extents file on either side
// (protocol.h, CLOSE). False otherwise: hand the extents over as a file.
bool extent_log_hand_over_prefix(ExtentLog* x, char* out, size_t cap);

}  // namespace ckptfwd::interpose
