// Whether a process that exists is still alive for ckptfwd: a zombie (it died and its
// parent has not reaped it) still answers kill(pid, 0), but its descriptors are closed: it
// writes nothing more, holds no file open and serves no socket. Every liveness check of a
// writer or a forwarder (fate files, orphaned versions, the process a forwarder stays for)
// counts it as dead. Allocation free: the preload library uses it.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
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

// Stopped by a signal (SIGSTOP) or by a debugger.
inline bool stopped(char state) { return state == 'T' || state == 't'; }

// The state letter of process pid as /proc/PID/stat gives it; '?' when the file cannot be
// opened or read (errno then says why). open_fn(path, flags) and close_fn(fd) open and
// close it: the preload library passes the libc calls it does not wrap.
template <class OpenFn, class CloseFn>
char read_state(long pid, OpenFn open_fn, CloseFn close_fn) {
  char path[48];
  snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
  int fd = open_fn(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return '?';
  char text[512];
  ssize_t n = ::read(fd, text, sizeof(text) - 1);
  close_fn(fd);
  if (n <= 0) return '?';
  text[n] = '\0';
  return of_stat(text);
}

}  // namespace ckptfwd::proc_state
