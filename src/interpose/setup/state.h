// Process-wide state of the preload library: configuration read once at init, the
// capture set, the fd table, the re-entry guard, logging and fallback accounting.
// Everything is static and zero-initialised, so wrappers called before the constructor
// (from other libraries' constructors) see an inert library and pass straight through.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <climits>

#include "interpose/setup/capture.h"
#include "interpose/setup/env_settings.h"
#include "interpose/track/fd_table.h"
#include "wire/session.h"

#define CKPTFWD_EXPORT extern "C" __attribute__((visibility("default")))

namespace ckptfwd::interpose {

struct Settings {
  bool active = false;      // capture on (CAPTURE set, not DISABLE, init succeeded)
  bool exit_wait = true;    // CKPTFWD_EXIT_WAIT != 0
  bool no_spawn = false;    // CKPTFWD_NO_SPAWN=1
  int exit_retry_s = 60;    // CKPTFWD_EXIT_RETRY_S: the exit wait's retries (exit_wait.h)
  int spin_us = 50;         // CKPTFWD_SPIN_US: polling for a reply before sleeping
  bool leased_open = true;  // CKPTFWD_LEASED_OPEN != 0: opens on a lease (wire/lease.h)
  // CKPTFWD_DETACHED_CLOSE != 0: a leased version's CLOSE is not waited for
  // (interpose/track/detached_close.h)
  bool detached_close = true;
  int rank = -1;
  mode_t umask = 022;
  bool session_ok = false;
  SessionPaths session{};
  char forwarder[PATH_MAX] = {};   // binary to start
  char launcher[PATH_MAX] = {};    // ckptfwd-launch beside the library's ../bin ("": none)
  char log_path[PATH_MAX] = {};    // "" = stderr; absolute (env_settings.h)
  char stats_path[PATH_MAX] = {};  // absolute
  AbsEnv abs_env{};                // path settings for a forwarder we start
  uint64_t settings_digest = 0;    // HELLO's "env=" (wire/settings_digest.h)
  unsigned capture_digest = 0;     // HELLO's "cap=" (wire/session.h capture_digest)
};

extern Settings g_settings;
extern CaptureSet g_capture;
extern FdTable g_fds;
// The process the state belongs to; a vfork child (same memory, other pid) must not act
// on it. Set at init and in the fork child handler.
extern std::atomic<pid_t> g_owner_pid;
bool owner_process();
// exec keeps the process but not the library's memory: the new image takes over the
// connection and the open versions the old one handed it (wrap_exec.cc).
void adopt_after_exec();

// Re-entry guard: set while the library works; wrappers seeing it call the real function.
extern __thread bool t_busy __attribute__((tls_model("initial-exec")));

class Busy {
 public:
  Busy() : prev_(t_busy) { t_busy = true; }
  ~Busy() { t_busy = prev_; }
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;

 private:
  bool prev_;
};

// Restores errno when it goes out of scope unless told the call failed.
class ErrnoKeeper {
 public:
  ErrnoKeeper();
  ~ErrnoKeeper();
  void fail(int err) { err_ = err; }  // leave errno = err
  ErrnoKeeper(const ErrnoKeeper&) = delete;
  ErrnoKeeper& operator=(const ErrnoKeeper&) = delete;

 private:
  int saved_;
  int err_ = 0;
};

void ensure_init();
// Set once init is done: every wrapped call reads it inline before calling ensure_init.
extern std::atomic<bool> g_init_done;
// The exit hand-over for _exit()/_Exit() (no stdio flush): the status to exit with
// (interpose/client/exit_wait.h).
int exit_without_flush(int status);
// True when this call should be considered for capture: initialised, active, not nested.
inline bool intercepting() {
  if (t_busy) return false;
  if (__builtin_expect(!g_init_done.load(std::memory_order_acquire), 0)) ensure_init();
  return g_settings.active;
}

// Resolves (dirfd, path) to a normalised absolute path in out (PATH_MAX). dirfd may be
// AT_FDCWD. False if it cannot be resolved (then the call is not captured).
bool resolve_path(int dirfd, const char* path, char* out);
// resolve_path + capture match. With follow (calls that follow symbolic links), a link
// whose own name matches the capture is followed first (at most 8 hops), so
// `latest -> ckpt.100` leads to the captured file it names; calls on the name itself
// (unlink, rename, lstat) pass follow = false. A link whose name is not captured is not
// looked at (that would cost every uncaptured open an lstat). errno untouched.
bool captured_path(int dirfd, const char* path, char* out, bool follow = true);
// Set by captured_path of this thread to its out buffer when, following links, it found
// that nothing exists at the resolved path on the real file system (lstat: ENOENT); null
// when it did not look. Compared with the caller's buffer: a captured_path of a signal
// handler in between leaves another buffer (or null) here, never a wrong answer.
extern __thread const char* t_real_path_absent __attribute__((tls_model("initial-exec")));

// "ckptfwd: <message>" to CKPTFWD_LOG or stderr.
void log_msg(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// path (CKPTFWD_LOG, CKPTFWD_STATS_FILE) opened for appending, created with mode when
// missing; never through a symbolic link and never another user's file, either of which
// may be planted where the path is in a directory others can write (/tmp): -1 then.
int open_own_append(const char* path, mode_t mode);
// Counts a fallback to the real path; logs only the first one of the process.
void note_fallback(const char* reason, const char* path);
long fallback_count();
void reset_fallbacks();  // a forked child reports its own
const char* first_fallback_reason();

// Fork handling hooks of other modules.
void client_atfork_child();
void dirs_atfork_prepare();
void dirs_atfork_parent();
void dirs_atfork_child();
void fallback_atfork_child();

}  // namespace ckptfwd::interpose
