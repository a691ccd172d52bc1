#include "interpose/client/client_connect.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "interpose/client/client.h"
#include "interpose/client/client_io.h"
#include "interpose/setup/env_settings.h"
#include "interpose/setup/state.h"
#include "interpose/setup/trust.h"
#include "interpose/wrap/real.h"
#include "wire/lease.h"
#include "wire/protocol.h"
#include "wire/settings_digest.h"

extern char** environ;

namespace ckptfwd::interpose {

char g_reason[1024] = "";
bool g_refused = false;

namespace {

constexpr int kStartTimeoutMs = 60000;
constexpr int kFineMs = 40;

void sleep_ms(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Polls for something that usually happens within milliseconds (a forwarder starting, the
// process that starts it releasing the election lock): sleeps of 1 ms for the first
// kFineMs (a forwarder's start, about 20 ms, is then seen within a millisecond of its
// listen, not up to 8 ms late), then 2, 4, 8 and 10 ms, within kStartTimeoutMs in all.
class Backoff {
 public:
  // Sleeps the next step; false once the time limit is used up.
  bool sleep() {
    if (waited_ >= kStartTimeoutMs) return false;
    sleep_ms(step_);
    waited_ += step_;
    if (waited_ >= kFineMs) step_ = step_ * 2 > 10 ? 10 : step_ * 2;
    return true;
  }
  bool expired() const { return waited_ >= kStartTimeoutMs; }
  void expire() { waited_ = kStartTimeoutMs; }

 private:
  int waited_ = 0;
  int step_ = 1;
};

// Waits up to ms for process pid to exit, woken by its exit (a pidfd) rather than by a
// polling step; where pidfds are missing (kernels before 5.3) it just sleeps a step.
void wait_for_exit(pid_t pid, int ms) {
  int pfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pfd < 0) {
    sleep_ms(ms);
    return;
  }
  pollfd p{pfd, POLLIN, 0};
  while (poll(&p, 1, ms) < 0 && errno == EINTR) {
  }
  real::close()(pfd);
}

bool g_peer_stopped = false;   // the last try_connect's HELLO timed out on a stopped forwarder
bool g_peer_retiring = false;  // the last try_connect's HELLO was answered RETIRE

// A forwarder that answered RETIRE (wire/protocol.h) removes its socket first thing as it
// leaves: waits for that, so that the start that follows is one with our settings, not a
// connect to it again. False if it is still there when the wait's time is up.
bool wait_for_retired() {
  struct stat st {};
  Backoff wait;
  while (real::stat()(g_settings.session.socket, &st) == 0)
    if (!wait.sleep()) return false;
  return true;
}

// The forwarder's stderr until it has detached: a file in our session dir, so that its
// error (a bad setting, say) reaches the user through our log line even when the job's
// stderr is not a terminal (under mpiexec it would have gone to /dev/null).
void forwarder_err_path(char* out, size_t cap) {
  snprintf(out, cap, "%s/forwarder.err", g_settings.session.dir);
}

// Appends ": <first line(s) of the forwarder's error file>" to g_reason, then removes it.
void take_forwarder_error(const char* path) {
  int fd = real::open()(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    char text[600];
    ssize_t n = read(fd, text, sizeof(text) - 1);
    real::close()(fd);
    if (n > 0) {
      text[n] = '\0';
      while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' ')) text[--n] = '\0';
      for (char* c = text; *c; ++c)
        if (*c == '\n') *c = ' ';
      size_t len = strlen(g_reason);
      snprintf(g_reason + len, sizeof(g_reason) - len, ": %s", text);
    }
  }
  real::unlink()(path);
}

// Starts `forwarder --daemon` without LD_PRELOAD, its stderr to err_path: *pid. An early
// start (start_forwarder_early) passes its election lock (dup'ed to fd 3 of the forwarder,
// which holds it until it listens) and its own pid, and runs ckptfwd-launch FORWARDER
// instead, which forks the forwarder away and exits (interpose/launch/launch_main.cc).
bool launch_forwarder(const char* err_path, int election_fd, pid_t* pid) {
  const char* bin = g_settings.forwarder;
  if (!bin[0] || real::access()(bin, X_OK) != 0) {
    snprintf(g_reason, sizeof(g_reason),
             "forwarder binary %s not executable (set CKPTFWD_FORWARDER)",
             bin[0] ? bin : "(unknown)");
    return false;
  }
  const char* launcher = g_settings.launcher;
  if (election_fd >= 0 && (!launcher[0] || real::access()(launcher, X_OK) != 0)) {
    snprintf(g_reason, sizeof(g_reason), "%s not executable",
             launcher[0] ? launcher : "ckptfwd-launch");
    return false;
  }
  const AbsEnv& abs = g_settings.abs_env;
  size_t n = 0;
  while (environ && environ[n]) ++n;
  char** envp = static_cast<char**>(malloc((n + static_cast<size_t>(abs.n) + 3) * sizeof(char*)));
  if (!envp) {
    set_reason("malloc", ENOMEM);
    return false;
  }
  // Path settings as made absolute at init (env_settings.h): the forwarder works in `/`.
  size_t k = 0;
  for (size_t i = 0; i < n; ++i)
    if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 && !abs_replacement(environ[i], abs) &&
        !wire::is_start_entry(environ[i]))
      envp[k++] = environ[i];
  for (int i = 0; i < abs.n; ++i) envp[k++] = const_cast<char*>(abs.entry[i]);
  char election[] = "CKPTFWD_ELECTION_FD=3";
  char started_for[48];
  if (election_fd >= 0) {
    snprintf(started_for, sizeof(started_for), "CKPTFWD_STARTED_FOR=%ld",
             static_cast<long>(getpid()));
    envp[k++] = election;
    envp[k++] = started_for;
  }
  envp[k] = nullptr;

  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  // The daemon outlives this process: it must not hold the caller's pipes open (a shell
  // capturing our output would wait for it), so stdin/stdout go to /dev/null and stderr to
  // err_path (the daemon points it at CKPTFWD_LOG or /dev/null once detached).
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW,
                                   0600);
  if (election_fd >= 0) posix_spawn_file_actions_adddup2(&fa, election_fd, 3);
  posix_spawn_file_actions_addclosefrom_np(&fa, election_fd >= 0 ? 4 : 3);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  char* argv[] = {const_cast<char*>(bin), const_cast<char*>("--daemon"), nullptr};
  char* launch_argv[] = {const_cast<char*>(launcher), const_cast<char*>(bin), nullptr};
  int rc = election_fd >= 0 ? posix_spawn(pid, launcher, &fa, &attr, launch_argv, envp)
                            : posix_spawn(pid, bin, &fa, &attr, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  free(envp);
  if (rc != 0) {
    set_reason("posix_spawn forwarder", rc);
    return false;
  }
  return true;
}

// Starts `forwarder --daemon` and waits for it to report ready.
bool spawn_forwarder() {
  const char* bin = g_settings.forwarder;
  char err_path[PATH_MAX + 16];
  forwarder_err_path(err_path, sizeof(err_path));
  pid_t pid = -1;
  if (!launch_forwarder(err_path, -1, &pid)) {
    real::unlink()(err_path);
    return false;
  }
  for (int waited = 0; waited < kStartTimeoutMs; waited += 10) {
    int status = 0;
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == 0) {  // `--daemon` returns once its forwarder listens: usually within ~15 ms
      wait_for_exit(pid, 10);
      w = waitpid(pid, &status, WNOHANG);
    }
    if (w == pid) {
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        real::unlink()(err_path);
        return true;
      }
      snprintf(g_reason, sizeof(g_reason), "%s --daemon failed (status %d)", bin,
               WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
      take_forwarder_error(err_path);
      return false;
    }
    if (w < 0 && errno != EINTR) {  // SIGCHLD ignored: the caller polls connect
      real::unlink()(err_path);
      return true;
    }
  }
  snprintf(g_reason, sizeof(g_reason), "%s --daemon not ready after %d s", bin,
           kStartTimeoutMs / 1000);
  take_forwarder_error(err_path);
  return false;
}

// True if the flock'd fd is still the file at path: an exiting forwarder unlinks the lock
// (under the flock) and removes the session dir; whoever waited on the old file must
// start over with a new one.
bool lock_is_current(int fd, const char* path) {
  struct stat held {
  }, now{};
  return real::fstat()(fd, &held) == 0 && held.st_nlink > 0 && real::stat()(path, &now) == 0 &&
         held.st_dev == now.st_dev && held.st_ino == now.st_ino;
}

// Takes the election lock (bounded wait) and returns its fd; or, while another process
// holds it, connects to the forwarder that process starts: -1 and *connected >= 0.
// -1 and *connected = -1 on failure (g_reason says why).
int take_lock(int* connected) {
  const SessionPaths& sp = g_settings.session;
  *connected = -1;
  Backoff wait;
  int err = ETIMEDOUT;
  while (!wait.expired()) {
    mkdir(sp.stage_root, 0700);
    if (mkdir(sp.dir, 0700) != 0 && errno != EEXIST) {
      set_reason(sp.dir, errno);
      return -1;
    }
    // Ours now, or planted by someone else before our mkdir: never put a lock in theirs.
    if (check_session_dir(sp.dir, g_reason, sizeof(g_reason)) == DirCheck::kRefused) {
      refuse(g_reason);
      return -1;
    }
    int fd = real::open()(sp.lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
      if (errno == ENOENT) {  // the dir was removed right after our mkdir: again
        wait.sleep();
        continue;
      }
      set_reason(sp.lock, errno);
      return -1;
    }
    bool locked = false;
    do {
      if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        locked = true;
        break;
      }
      if (errno != EWOULDBLOCK && errno != EINTR) {
        err = errno;
        wait.expire();
        break;
      }
      // Another process holds the lock to start the forwarder: connect as soon as it
      // listens instead of waiting for the lock (the ranks of a node would otherwise go
      // through it one at a time, each with its HELLO).
      int c = try_connect();
      if (c >= 0 || g_refused) {
        real::close()(fd);
        *connected = c;
        return -1;
      }
    } while (wait.sleep());
    if (locked && lock_is_current(fd, sp.lock)) return fd;
    real::close()(fd);  // a stale lock file (its forwarder removed it): take the new one
  }
  set_reason(sp.lock, err);
  return -1;
}

// A failed `--daemon` may only have failed to tell us (its readiness message lost or
// garbled): a forwarder that answers HELLO is up, and falling back beside it would split
// a file between staging and the real path. Only a silent socket keeps the spawn's reason.
int connect_despite_spawn_failure() {
  char spawn_reason[sizeof(g_reason)];
  memcpy(spawn_reason, g_reason, sizeof(g_reason));
  int fd = try_connect();
  if (fd >= 0) {
    log_msg("the forwarder start reported a failure (%s) but the forwarder answers; using it",
            spawn_reason);
  } else if (!g_refused) {
    memcpy(g_reason, spawn_reason, sizeof(g_reason));
  }
  return fd;
}

// The early start's election: the lock taken without waiting, and only where no
// forwarder's socket is there yet. Its fd, or -1 (someone else starts it, one runs, or the
// session directory is not ours: the first call finds out and says why).
int try_election_now() {
  const SessionPaths& sp = g_settings.session;
  struct stat st {};
  if (real::stat()(sp.socket, &st) == 0) return -1;
  mkdir(sp.stage_root, 0700);
  if (mkdir(sp.dir, 0700) != 0 && errno != EEXIST) return -1;
  char why[256];
  if (check_session_dir(sp.dir, why, sizeof(why)) != DirCheck::kOurs) return -1;
  int fd = real::open()(sp.lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0 || !lock_is_current(fd, sp.lock) ||
      real::stat()(sp.socket, &st) == 0) {
    real::close()(fd);
    return -1;
  }
  return fd;
}

}  // namespace

void set_reason(const char* what, int err) {
  snprintf(g_reason, sizeof(g_reason), "%s: %s", what, strerror(err));
}

void refuse(const char* why) {
  if (why != g_reason) snprintf(g_reason, sizeof(g_reason), "%s", why);
  g_refused = true;
  log_msg("ERROR: %s; this process writes its checkpoint files directly", g_reason);
}

int try_connect() {
  const SessionPaths& sp = g_settings.session;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    set_reason("socket", errno);
    return -1;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (strlen(sp.socket) >= sizeof(addr.sun_path)) {
    real::close()(fd);
    set_reason(sp.socket, ENAMETOOLONG);
    return -1;
  }
  strcpy(addr.sun_path, sp.socket);
  int rc;
  do {
    rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    set_reason(sp.socket, errno);
    real::close()(fd);
    return -1;
  }
  // Before a single byte goes out: the listener must be ours (docs/semantics.md, "Other users on
  // the node").
  if (!peer_is_self(fd, sp.socket, sp.dir, g_reason, sizeof(g_reason))) {
    real::close()(fd);
    refuse(g_reason);
    return -1;
  }
  fd = move_high(fd);
  set_check_timeout(fd);
  char pid[24];
  char rank[24];
  wire::fmt_i64(pid, getpid());
  wire::fmt_i64(rank, g_settings.rank);
  // Leased opens (wire/lease.h) for a process that is not an MPI rank: another node's rank
  // may act on a path right after this one's open returned, before its forwarder saw it.
  // The settings digest: a forwarder started early by another process with other settings
  // retires for one started with ours (wire/settings_digest.h).
  char settings[40];
  char capture[24];
  const char* hello[6] = {wire::kHello, pid, rank};
  size_t n = 3;
  if (g_settings.leased_open && g_settings.rank < 0) hello[n++] = wire::kLeasePrefix;
  if (wire::format_settings(g_settings.settings_digest, settings, sizeof(settings)))
    hello[n++] = settings;
  // The globs: a forwarder of this job started for other ones says so (wire/protocol.h).
  if (g_settings.capture_digest &&
      wire::format_capture(g_settings.capture_digest, capture, sizeof(capture)))
    hello[n++] = capture;
  wire::Fields reply;
  char buf[1024];
  if (!exchange_small(fd, hello, n, buf, sizeof(buf), reply)) {
    g_peer_stopped = errno == ETIMEDOUT;
    if (g_peer_stopped)
      snprintf(g_reason, sizeof(g_reason),
               "%s: the forwarder is stopped (SIGSTOP?) and did not answer for %d s", sp.socket,
               kStoppedLimitMs / 1000);
    else
      snprintf(g_reason, sizeof(g_reason), "%s: HELLO not answered", sp.socket);
    real::close()(fd);
    return -1;
  }
  if (strcmp(reply[0], wire::kRetire) == 0) {
    g_peer_retiring = true;
    snprintf(g_reason, sizeof(g_reason),
             "%s: the forwarder another process started early runs with other settings and "
             "did not leave",
             sp.socket);
    real::close()(fd);
    return -1;
  }
  if (strcmp(reply[0], wire::kOk) != 0) {
    snprintf(g_reason, sizeof(g_reason), "%s: HELLO not answered", sp.socket);
    real::close()(fd);
    return -1;
  }
  return fd;
}

int reach_forwarder() {
  // The directory is checked before its socket is connected to (a planted socket would
  // otherwise get our HELLO); a missing one is created and checked by take_lock.
  DirCheck dir = check_session_dir(g_settings.session.dir, g_reason, sizeof(g_reason));
  if (dir == DirCheck::kRefused) refuse(g_reason);
  g_peer_stopped = false;
  g_peer_retiring = false;
  int fd = dir == DirCheck::kOurs ? try_connect() : -1;
  if (fd < 0 && g_peer_retiring && !wait_for_retired()) return -1;
  // A stopped forwarder keeps its socket and lock: starting another cannot help.
  if (fd < 0 && !g_refused && !g_peer_stopped) {
    int lock = take_lock(&fd);
    if (lock >= 0) {
      fd = try_connect();  // someone else may have started it while we waited
      if (fd < 0 && !g_refused && !g_settings.no_spawn) {
        if (spawn_forwarder()) {
          Backoff wait;
          do {
            fd = try_connect();
          } while (fd < 0 && !g_refused && wait.sleep());
        } else {
          fd = connect_despite_spawn_failure();
        }
      }  // with CKPTFWD_NO_SPAWN=1 the connect error stays the reason
      real::close()(lock);
    }
  }
  return fd;
}

void start_forwarder_early() {
  if (!g_settings.session_ok || g_settings.no_spawn) return;
  int saved = errno;
  int lock = try_election_now();
  if (lock >= 0) {
    // The daemon reports nothing here: a forwarder that cannot start is started again by
    // the first call, which reports why (its stderr then goes to forwarder_err_path).
    pid_t pid = -1;
    char reason[sizeof(g_reason)];
    memcpy(reason, g_reason, sizeof(g_reason));
    if (launch_forwarder("/dev/null", lock, &pid)) {
      // ckptfwd-launch forks the forwarder and exits at once: reaped here, so the
      // application never sees a child of ours (a wait() of its own would otherwise get it).
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    memcpy(g_reason, reason, sizeof(g_reason));
    real::close()(lock);  // the daemon holds it now, until its forwarder listens
  }
  errno = saved;
}

}  // namespace ckptfwd::interpose
