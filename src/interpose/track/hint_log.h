// Dtype hints of a version (base/dtype.h): "bytes [off, off+len) are an array of <dtype>",
// recorded by the write wrappers while an MPI write through a typed file view is in progress
// (write_context.h), for any tracked version. Handed to the forwarder like the extents
// (extent_log.h): when the process's last fd of the version closes (CLOSE ... hints=FILE)
// and at fsync (SYNC ... hints=FILE).
//
// The file, `<session dir>/h<vid>.<pid>.<seq>` (0600), is the 17-byte records of dtype.h.
// Records are kept in memory in order (a write continuing the previous one with the same
// code extends it instead of adding a record); past kMaxMemHints records they are appended
// to the file. A failure only loses hints (they never affect correctness): the hand-over
// then sends no file.
#pragma once
#include <pthread.h>

#include <cstddef>
#include <cstdint>

#include "base/view_shape.h"
#include "interpose/track/handover_file.h"

namespace ckptfwd::interpose {

inline constexpr size_t kMaxMemHints = 4096;  // 68 KiB of records before a spill
inline constexpr size_t kMaxMemViews = 8;     // distinct views kept between spills

struct HintRecord {
  uint64_t offset;
  uint64_t length;
  uint8_t code;  // DtypeCode, never kBytes
};

struct HintLog {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  unsigned long long vid = 0;
  char dir[4096] = {};        // the session dir the file goes to
  HintRecord* rec = nullptr;  // kMaxMemHints of them, malloc'd at creation
  size_t n = 0;
  ViewShape views[kMaxMemViews];  // written after the records at each spill
  size_t n_views = 0;
  HandOverFile file;  // in dir, created at the first spill or hand-over
  bool lost = false;  // a spill failed: this period's hints are dropped
};

// nullptr when out of memory (or dir too long): the version then gets no hints.
HintLog* hint_log_create(unsigned long long vid, const char* dir);
// Frees the memory; removes a file never handed over when remove_file (false in a forked
// child, whose copy of the state names the parent's file).
void hint_log_destroy(HintLog* x, bool remove_file = true);
// Records that [off, off+len) holds elements of code (a DtypeCode other than kBytes).
void hint_log_add(HintLog* x, uint64_t off, uint64_t len, uint8_t code);
// Records that the bytes written went through a view of v's global array (once per view
// per spill: a write through the same view again adds nothing). Past kMaxMemViews
// distinct views, the records spill first.
void hint_log_add_view(HintLog* x, const ViewShape& v);
// Writes what was recorded since the last hand-over into its file, closes it and puts its
// base name in out (cap bytes). The next records start a new file. False when there is
// nothing to hand over (no typed write since the last hand-over, or hints were lost).
bool hint_log_hand_over(HintLog* x, char* out, size_t cap);

}  // namespace ckptfwd::interpose
