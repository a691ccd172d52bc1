// Whether a process that exists is still alive for ckptfwd: a zombie (it died and its
// parent has not reaped it) still answers kill(pid, 0), but its descriptors are closed: it
// writes nothing more, holds no file open and serves no socket. Every liveness check of a
// writer or a forwarder (fate files, orphaned versions, the process a forwarder stays for)
// counts it as dead. Allocation free: the preload library uses it.
#pragma once
#include <cstring>

namespace ckptfwd::proc_state {

// The state letter of the text of /proc/PID/stat ("pid (comm) S ..."; comm may hold ')'
// itself, so the state follows the last one), '?' when the text is not such a line.
inline char of_stat(const char* text) {
  const char* p = strrchr(text, ')');
  return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

// A zombie or a process being torn down ('X', 'x').
inline bool dead(char state) { return state == 'Z' || state == 'X' || state == 'x'; }

}  // namespace ckptfwd::proc_state
