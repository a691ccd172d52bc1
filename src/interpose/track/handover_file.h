// A file of records that the library writes into the session dir and hands to the
// forwarder at CLOSE and SYNC: the extents of extent_log.h and the dtype hints of
// hint_log.h (protocol.h, CLOSE and SYNC). It is created (0600, O_EXCL, never through a
// symbolic link) by the first append of a period, and the period ends with a hand-over
// (closed; the forwarder owns and deletes the file from then on) or a drop (closed and
// removed). Its owner's lock is held around every call. Allocation free.
#pragma once
#include <cstddef>

namespace ckptfwd::interpose {

struct HandOverFile {
  const char* dir = nullptr;  // the session dir it goes to (outlives this)
  char stem[48] = {};         // its name up to the pid: "v<vid>.ext.", "h<vid>."
  int fd = -1;                // the current file: open from its first append to its hand-over
  char name[96] = {};         // its base name, "<stem><pid>.<seq>"
};

// Appends p[0, n) to the current file, creating it first when none is open (with n == 0
// too: an empty file). False with errno set when it cannot be created (fd stays -1; name
// says which file) or written.
bool hand_over_append(HandOverFile& f, const void* p, size_t n);
// Closes the current file and puts its base name in out (cap bytes): the forwarder owns it
// now. False, the file left as it is, when none is open or its name does not fit.
bool hand_over_give(HandOverFile& f, char* out, size_t cap);
// Closes the current file, if any, and removes it when remove (false in a forked child,
// whose copy of the state names its parent's file).
void hand_over_drop(HandOverFile& f, bool remove = true);

}  // namespace ckptfwd::interpose
