#include "interpose/client/fate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "interpose/setup/state.h"
#include "interpose/setup/trust.h"
#include "interpose/wrap/real.h"
#include "wire/fate.h"
#include "wire/proc_state.h"

namespace ckptfwd::interpose {
namespace {

using fate::Fate;

// Reads norm's fate from file (kNone: absent or unreadable). Only a regular file of ours.
Fate read_fate(const char* file, const char* norm, long* pid) {
  int fd = real::open()(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Fate::kNone;
  char text[PATH_MAX + 64];
  struct stat st {};
  ssize_t n = -1;
  if (real::fstat()(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
    n = read(fd, text, sizeof(text) - 1);
  real::close()(fd);
  if (n <= 0) return Fate::kNone;
  text[n] = '\0';
  return fate::parse_fate(text, norm, pid);
}

// A zombie counts as dead (wire/proc_state.h): a forwarder killed under a job script
// that does not reap it must not keep its "staged" claims alive.
bool process_alive(long pid) {
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  char state = proc_state::read_state(pid, real::open(), real::close());
  return state == '?' || !proc_state::dead(state);  // '?': no /proc, kill() said it exists
}

// Writes the direct fate under a name of our own; renamed or linked into place by the
// caller. False if it cannot be written.
bool write_direct_temp(const char* norm, char* tmp, size_t cap) {
  int n =
      snprintf(tmp, cap, "%s/fate.tmp.%ld", g_settings.session.dir, static_cast<long>(getpid()));
  if (n <= 0 || static_cast<size_t>(n) >= cap) return false;
  char text[PATH_MAX + 64];
  size_t len = fate::fate_text(Fate::kDirect, 0, norm, text, sizeof(text));
  real::unlink()(tmp);
  int fd = real::open()(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool ok = len > 0 && real::write()(fd, text, len) == static_cast<ssize_t>(len);
  if (real::close()(fd) != 0) ok = false;
  if (!ok) real::unlink()(tmp);
  return ok;
}

}  // namespace

bool fate_is_direct(const char* norm) {
  if (!g_settings.session_ok) return false;
  int saved = errno;
  char file[PATH_MAX];
  bool direct = fate::fate_file(g_settings.session.dir, norm, file, sizeof(file)) &&
                read_fate(file, norm, nullptr) == Fate::kDirect;
  errno = saved;
  return direct;
}

bool claim_direct_fate(const char* norm) {
  if (!g_settings.session_ok) return true;
  int saved = errno;
  char why[256];
  // Missing: made now (as the forwarder's election does), so that a forwarder started
  // later by another process finds the fate. Not ours: nobody stages into it.
  DirCheck dir = check_session_dir(g_settings.session.dir, why, sizeof(why));
  if (dir == DirCheck::kMissing) {
    mkdir(g_settings.session.stage_root, 0700);
    mkdir(g_settings.session.dir, 0700);
    dir = check_session_dir(g_settings.session.dir, why, sizeof(why));
  }
  if (dir != DirCheck::kOurs) {
    errno = saved;
    return true;
  }
  char file[PATH_MAX];
  char tmp[PATH_MAX];
  bool claimed = false;
  if (fate::fate_file(g_settings.session.dir, norm, file, sizeof(file)) &&
      write_direct_temp(norm, tmp, sizeof(tmp))) {
    for (int attempt = 0; attempt < 3 && !claimed; ++attempt) {
      if (real::link()(tmp, file) == 0) {
        claimed = true;
        break;
      }
      if (errno != EEXIST) break;
      long pid = 0;
      Fate f = read_fate(file, norm, &pid);
      if (f == Fate::kDirect) {
        claimed = true;
      } else if (f == Fate::kStaged && process_alive(pid)) {
        break;  // another process stages it through a live forwarder
      } else if (f != Fate::kNone || errno != ENOENT) {
        // Stale (its forwarder is gone) or unreadable: ours replaces it.
        claimed = real::rename()(tmp, file) == 0;
      }  // else removed meanwhile (its last writer closed): link again
    }
    real::unlink()(tmp);
  }
  errno = saved;
  return claimed;
}

bool test_forced_fallback() {
  const char* v = getenv("CKPTFWD_TEST_FALLBACK_PID");  // per call: a forked child differs
  return v && *v && atol(v) == static_cast<long>(getpid());
}

}  // namespace ckptfwd::interpose
