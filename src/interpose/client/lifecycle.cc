// Init (constructor or first wrapped call), the exit handler and the fork handlers.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "interpose/client/client.h"
#include "interpose/client/exit_wait.h"
#include "interpose/client/notices.h"
#include "interpose/client/stats_line.h"
#include "interpose/setup/cwd_cache.h"
#include "interpose/setup/cwd_filter.h"
#include "interpose/setup/env_settings.h"
#include "interpose/setup/state.h"
#include "interpose/track/detached_close.h"
#include "interpose/track/extent_log.h"
#include "interpose/track/versions.h"
#include "interpose/wrap/real.h"
#include "wire/setting_value.h"
#include "wire/settings_digest.h"
#include "wire/settings_table.h"

namespace ckptfwd::interpose {
namespace {

pthread_once_t g_once = PTHREAD_ONCE_INIT;

void copy_env(const char* name, char* out, size_t cap) {
  const char* v = env_value(name);
  out[0] = '\0';
  if (v && strlen(v) < cap) strcpy(out, v);
}

// The umask without changing it (umask() is set-and-get and racy with other threads).
mode_t read_umask() {
  int fd = real::open()("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    real::close()(fd);
    if (n > 0) {
      buf[n] = '\0';
      const char* p = strstr(buf, "\nUmask:");
      if (p) return static_cast<mode_t>(strtoul(p + 7, nullptr, 8));
    }
  }
  mode_t m = real::umask()(022);
  real::umask()(m);
  return m;
}

// The forwarder (CKPTFWD_FORWARDER, else <library dir>/../bin/ckptfwd-forwarder) and the
// early start's ckptfwd-launch (<library dir>/../libexec/ckptfwd/, where make install puts
// the helpers, else <library dir>/../bin/ as in the build tree).
void find_forwarder() {
  copy_env("CKPTFWD_FORWARDER", g_settings.forwarder, sizeof(g_settings.forwarder));
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&ensure_init), &info) || !info.dli_fname) return;
  char bin[PATH_MAX];
  if (!normalize_path(info.dli_fname, nullptr, bin, sizeof(bin))) return;
  char* slash = strrchr(bin, '/');
  static const char kBin[] = "/../bin/";
  if (!slash || static_cast<size_t>(slash - bin) + sizeof(kBin) > sizeof(bin)) return;
  strcpy(slash, kBin);
  auto join = [&](const char* name, char* out, size_t cap) {
    if (strlen(bin) + strlen(name) < cap) snprintf(out, cap, "%s%s", bin, name);
  };
  if (!g_settings.forwarder[0])
    join("ckptfwd-forwarder", g_settings.forwarder, sizeof(g_settings.forwarder));
  join("../libexec/ckptfwd/ckptfwd-launch", g_settings.launcher, sizeof(g_settings.launcher));
  if (real::access()(g_settings.launcher, X_OK) != 0)
    join("ckptfwd-launch", g_settings.launcher, sizeof(g_settings.launcher));
}

size_t table_capacity() {
  rlimit rl{};
  size_t cap = 1u << 20;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY && rl.rlim_max < cap)
    cap = rl.rlim_max;
  return cap < 1024 ? 1024 : cap;
}

void write_stats_line() {
  long n = fallback_count();
  if (n == 0 || !g_settings.stats_path[0]) return;
  char line[640];
  size_t len = format_client_stats_line(line, sizeof(line), static_cast<int>(getpid()),
                                        g_settings.rank, n, first_fallback_reason());
  if (len == 0) return;
  int fd = open_own_append(g_settings.stats_path, 0644);
  if (fd < 0) return;
  ssize_t w = real::write()(fd, line, len);
  (void)w;
  real::close()(fd);
}

std::atomic<bool> g_exit_done{false};

// Hands over every version still open at exit, then waits until this process's versions
// are committed (when mpiexec returns, the checkpoint is on the store: docs/user-guide.md; the wait
// and its retries: interpose/client/exit_wait.h). Returns the exit status to use: status, or
// kNotCommittedStatus instead of 0 when the files are not on the store.
// flush: exit() path (stdio is flushed after atexit handlers, so flush first); _exit()
// must not flush.
int exit_work(bool flush, int status) {
  if (!g_settings.active || !owner_process()) return status;
  if (g_exit_done.exchange(true)) return status;
  Busy busy;
  int saved = errno;
  if (flush) fflush(nullptr);
  g_fds.for_each([](int, Version* v) {
    if (v->view || !v->owned.load() || v->abandoned.load() || v->close_sent.exchange(true)) return;
    close_version(v);  // with its extents when shared across nodes
  });
  // A close that was not waited for and failed falls back now, before the wait.
  settle_detached_closes();
  bool committed = true;
  if (g_settings.exit_wait && client_closed_any()) committed = wait_for_commits_at_exit();
  if (detached_close_losses() > 0) committed = false;
  // Also a process that only read (a restart that finds no checkpoint because its store
  // moved says why); one that never reached the forwarder has no page and says nothing.
  print_new_notices();
  write_stats_line();
  errno = saved;
  return committed || status != 0 ? status : kNotCommittedStatus;
}

// Registered with on_exit (not atexit) for the status exit() was given: a process whose
// files are not committed ends with kNotCommittedStatus instead of 0 through _exit, which
// skips the exit handlers registered before the library's own (none of the application's:
// those registered after it ran already) and stdio's flush (done by exit_work).
void on_exit_handler(int status, void*) {
  int now = exit_work(true, status);
  if (now != status) real::_exit()(now);
}

// The connection and fallback locks are not taken around fork: a thread waiting in SYNC
// or copying a large file would stall every fork. The child never uses the parent's
// connection or fallback state, so it simply re-creates those locks. The directory list
// is short-lived and shared, so fork waits for it.
void atfork_prepare() { dirs_atfork_prepare(); }
void atfork_parent() {
  dirs_atfork_parent();
  // The child may write through the fds it inherits, into extents this process never
  // records: the forwarder must use the staged files' data extents for them. (Files shared
  // across nodes keep theirs: MPI processes do not write them from forked children.)
  g_fds.for_each([](int, Version* v) {
    if (v->ext && !v->shared) extent_log_mark_lost(v->ext);
  });
}
void atfork_child() {
  fallback_atfork_child();
  detached_close_atfork_child();
  dirs_atfork_child();
  client_atfork_child();
  cwd_atfork_child();
  g_cwd_filter.reset_after_fork();
  g_owner_pid.store(getpid());
  g_exit_done.store(false);
  reset_fallbacks();
  // Inherited fds still point at the parent's versions; the parent reports them.
  g_fds.for_each([](int, Version* v) { v->owned.store(false); });
}

void do_init() {
  Busy busy;
  int saved = errno;
  real::resolve_all();
  // CKPTFWD_DISABLE=1 in the environment: nothing at all, not even the settings file read.
  if (const char* off = getenv("CKPTFWD_DISABLE"); off && *off) {
    bool disabled = false;
    if (wire::parse_switch(off, &disabled) && disabled) {
      errno = saved;
      return;
    }
  }
  // The log first: warnings about the other settings go where the user looks.
  env_abs_path("CKPTFWD_LOG", g_settings.log_path, sizeof(g_settings.log_path));
  if (env_switch("CKPTFWD_DISABLE")) {
    errno = saved;
    return;
  }
  // Said when the globs were to come from it: without them this process captures nothing.
  if (const char* problem = wire::config_file_problem(); problem && !getenv("CKPTFWD_CAPTURE"))
    log_msg("warning: %s", problem);
  const char* spec = wire::setting_value("CKPTFWD_CAPTURE");
  if (!spec || !*spec) {
    errno = saved;
    return;
  }
  if (!g_capture.parse(spec))
    log_msg("CKPTFWD_CAPTURE is too long; using the first %zu globs", g_capture.count());
  // The path settings and globs as a forwarder this process starts gets them: the job (and
  // so the session) is named after those globs, here as there (wire/session.h).
  collect_abs_env(g_settings.abs_env);
  const char* handed = abs_replacement("CKPTFWD_CAPTURE=", g_settings.abs_env);
  const char* globs = handed ? handed + sizeof("CKPTFWD_CAPTURE=") - 1 : spec;
  g_settings.session_ok = session_paths(g_settings.session, globs);
  g_settings.capture_digest = capture_digest(globs, nullptr);
  char store[PATH_MAX];
  env_abs_path("CKPTFWD_STORE", store, sizeof(store));
  g_capture.set_exclusions(g_settings.session_ok ? g_settings.session.stage_root : nullptr,
                           store[0] ? store : nullptr);
  if (g_capture.empty() || !g_fds.init(table_capacity())) {
    errno = saved;
    return;
  }
  g_settings.umask = read_umask();
  g_settings.rank = rank_from_env();
  g_settings.exit_wait = env_switch("CKPTFWD_EXIT_WAIT");
  g_settings.no_spawn = env_switch("CKPTFWD_NO_SPAWN");
  g_settings.exit_retry_s = static_cast<int>(env_int("CKPTFWD_EXIT_RETRY_S"));
  g_settings.spin_us = static_cast<int>(env_int("CKPTFWD_SPIN_US"));
  g_settings.leased_open = env_switch("CKPTFWD_LEASED_OPEN");
  g_settings.detached_close = env_switch("CKPTFWD_DETACHED_CLOSE");
  env_abs_path("CKPTFWD_STATS_FILE", g_settings.stats_path, sizeof(g_settings.stats_path));
  g_settings.settings_digest = launch_settings_digest(g_settings.abs_env);
  find_forwarder();
  g_owner_pid.store(getpid());
  cwd_refresh();
  adopt_after_exec();
  on_exit(on_exit_handler, nullptr);
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
  g_settings.active = true;
  reserve_high_fds();
  // The node's forwarder starts now (not waited for): the first checkpoint then finds it
  // listening instead of paying its start (23-31 ms on the test machine) at its open. Every
  // program, not only MPI ranks: the job script's shell starts it while the job sets up,
  // and a non-MPI application's first file no longer waits (docs/limitations.md, "Limitations").
  if (env_switch("CKPTFWD_EARLY_START")) start_forwarder_early();
  errno = saved;
}

__attribute__((constructor)) void ckptfwd_ctor() { ensure_init(); }

}  // namespace

// Every wrapped call asks: after the first, one load instead of a call to pthread_once.
std::atomic<bool> g_init_done{false};
void ensure_init() {
  if (__builtin_expect(g_init_done.load(std::memory_order_acquire), 1)) return;
  pthread_once(&g_once, do_init);
  g_init_done.store(true, std::memory_order_release);
}
int exit_without_flush(int status) { return exit_work(false, status); }

}  // namespace ckptfwd::interpose

// Programs that end with _exit (dash, forked workers) skip atexit handlers: do the same
// hand-over and commit wait there, without the stdio flush _exit promises not to do.
CKPTFWD_EXPORT void _exit(int status) {
  if (!ckptfwd::interpose::t_busy) status = ckptfwd::interpose::exit_without_flush(status);
  ckptfwd::interpose::real::_exit()(status);
  __builtin_unreachable();
}
CKPTFWD_EXPORT void _Exit(int status) {
  if (!ckptfwd::interpose::t_busy) status = ckptfwd::interpose::exit_without_flush(status);
  ckptfwd::interpose::real::_Exit()(status);
  __builtin_unreachable();
}
