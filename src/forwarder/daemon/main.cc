// ckptfwd-forwarder [--daemon] [--foreground] [--help] [--version]
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "common/config.h"
#include "common/release.h"
#include "forwarder/daemon/crash_handler.h"
#include "forwarder/daemon/daemonize.h"
#include "forwarder/daemon/forwarder.h"
#include "forwarder/daemon/log_place.h"
#include "forwarder/daemon/path_settings.h"
#include "forwarder/staging/staging.h"
#include "forwarder/util/log.h"
#include "schema/infer.h"
#include "store/manifest/owner_check.h"
#include "wire/session.h"
#include "wire/setting_value.h"
#include "wire/settings_digest.h"

using namespace ckptfwd;

namespace {
const char kUsage[] =
    "usage: ckptfwd-forwarder [--daemon] [--foreground] [--help] [--version]\n"
    "  The per-node, per-job forwarder of ckptfwd: takes the checkpoint files the preload\n"
    "  library captures, compresses them into containers on the store, serves them back.\n"
    "  --daemon      detach; exit 0 once the control socket accepts connections\n"
    "  --foreground  stay attached (the default)\n"
    "  Settings come from CKPTFWD_CONFIG and CKPTFWD_* (STORE, SCHEME, CODEC, LEVEL,\n"
    "  WRITERS, CHUNK, KEEP, STAGE_DIR, STAGE_LIMIT, BATCH_WINDOW_MS, WAVE_WINDOW_MS,\n"
    "  BATCH_BYTES, GROUP_SIZE, IDLE_EXIT, TERM_DRAIN_S, STATS_FILE, LOG, LOG_LEVEL, JOB_ID,\n"
    "  NODE_ID); docs/settings.md lists every one, `ckptfwd config` shows them in effect.\n"
    "  Its node identity: CKPTFWD_NODE_ID, else SLURMD_NODENAME (with the host name's\n"
    "  first label when it differs from it), else the host name. Its job:\n"
    "  CKPTFWD_JOB_ID, else SLURM_JOB_ID, PBS_JOBID, LSB_JOBID, FLUX_JOB_ID, else\n"
    "  local-<digest of CKPTFWD_CAPTURE>. Its log: CKPTFWD_LOG, else\n"
    "  <store>/logs/<job>.<node>.log (when the capture directory does not exist at its\n"
    "  start: <stage dir>/ckptfwd-log-<uid>-<job>-<node>.log, moved there at its exit;\n"
    "  in the foreground on a terminal: stderr).\n"
    "  Signals: TERM/INT drain and exit (after CKPTFWD_TERM_DRAIN_S, 20 s, at most: what is\n"
    "  not committed by then stays staged for the next forwarder); USR1 appends the stats to\n"
    "  CKPTFWD_STATS_FILE.\n";
// The settings that place the store, read again: load stops at the first bad value, which
// may come before them in the environment.
Config with_store_settings(Config cfg) {
  if (const char* capture = wire::setting_value("CKPTFWD_CAPTURE")) cfg.set_capture(capture);
  std::string ignored;
  if (const char* store = wire::setting_value("CKPTFWD_STORE"); store && *store)
    cfg.set("CKPTFWD_STORE", store, &ignored);
  return cfg;
}
// Under mpiexec our stderr is the library's file in the session dir (it quotes it in its
// own log line) or /dev/null: the message also goes to CKPTFWD_LOG when that names a file,
// and to the default log file (log_place.h, from the settings read so far) when it is unset.
void report_bad_config(const Config& partial, const std::string& err) {
  std::string line = "ckptfwd-forwarder: error: bad configuration: " + err + "\n";
  fputs(line.c_str(), stderr);
  SessionPaths paths;
  const bool have_paths = session_paths(paths);
  std::string log;
  if (const char* named = wire::setting_value("CKPTFWD_LOG"); named && *named)
    log = named;
  else if (have_paths)
    log = fwd::open_log_place(fwd::log_place(with_store_settings(partial), paths));
  if (log.empty() || log == "stderr" || log == "syslog") return;
  // (the log's own checks: never through a symbolic link, never into another user's file)
  fwd::log_init(log, "error");
  if (fwd::log_destination() != log) return;
  if (have_paths) fwd::log_set_identity(paths.node, paths.job);
  LOG_ERROR("bad configuration: %s", err.c_str());
}
// The command line: *daemon set; -1 to go on, else the exit code (help, a bad argument).
int parse_arguments(int argc, char** argv, bool* daemon) {
  *daemon = false;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--daemon")) {
      *daemon = true;
    } else if (!strcmp(argv[i], "--foreground")) {
      *daemon = false;
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(kUsage, stdout);
      return 0;
    } else if (!strcmp(argv[i], "--version")) {
      printf("ckptfwd-forwarder %s\n", release_version());
      return 0;
    } else {
      fprintf(stderr, "ckptfwd-forwarder: error: unknown argument '%s'\n%s", argv[i], kUsage);
      return 2;
    }
  }
  return -1;
}

// The settings into cfg, checked as far as they can be before anything is captured; false
// after reporting a bad one (report_bad_config).
bool load_settings(Config& cfg) {
  std::string err;
  if (!Config::load(cfg, &err)) {
    report_bad_config(cfg, err);
    return false;
  }
  // A schema that does not parse is a configuration error, reported before anything is
  // captured (with its file, line and column), like any other bad setting.
  if (schema::Inferrer probe; !probe.configure(cfg, &err)) {
    report_bad_config(cfg, err);
    return false;
  }
  // A log, stats file or store it cannot use: named now, not silent once detached.
  if (!fwd::check_path_settings(cfg, &err)) {
    report_bad_config(cfg, err);
    return false;
  }
  return true;
}

// Before any thread exists: TERM/INT/USR1 (into *set) are blocked, to be taken by sigwait
// on one thread only (watch_signals); SIGPIPE is ignored.
void block_signals(sigset_t* set) {
  sigemptyset(set);
  sigaddset(set, SIGTERM);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, set, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

// Starts f and tells the waiting parent (ready, -1 if none) how it went: -1 to go on
// serving, else the exit code (another forwarder serves the socket: 0; failed: 1).
int start_forwarder(fwd::Forwarder& f, int ready, const SessionPaths& paths) {
  std::string err;
  switch (f.start(&err)) {
    case fwd::Forwarder::Start::kOtherRunning:
      LOG_INFO("a forwarder already serves %s; leaving it to that one", paths.socket);
      fwd::signal_ready(ready, true, "");
      return 0;
    case fwd::Forwarder::Start::kFailed:
      LOG_ERROR("cannot start: %s", err.c_str());
      if (ready < 0 && fwd::log_fd() != 2)
        fprintf(stderr, "ckptfwd-forwarder: error: cannot start: %s\n", err.c_str());
      fwd::signal_ready(ready, false, "cannot start: " + err);
      return 1;
    case fwd::Forwarder::Start::kReady:
      break;
  }
  fwd::signal_ready(ready, true, "");
  return -1;
}

// A thread taking the blocked signals: USR1 asks f for the stats, TERM or INT for a stop.
void watch_signals(fwd::Forwarder& f, sigset_t set) {
  std::thread([&f, set] {
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      if (sig == SIGUSR1) {
        f.request_stats();
      } else {
        f.request_stop();
        return;
      }
    }
  }).detach();
}
}  // namespace

int main(int argc, char** argv) {
  bool daemon = false;
  if (int rc = parse_arguments(argc, argv, &daemon); rc >= 0) return rc;
  Config cfg;
  if (!load_settings(cfg)) return 2;
  SessionPaths paths;
  if (!session_paths(paths)) {
    fprintf(stderr,
            "ckptfwd-forwarder: error: the session path does not fit in a socket "
            "address. Fix: set CKPTFWD_STAGE_DIR to a shorter directory\n");
    return 2;
  }
  // An early start by a library (client.h, start_forwarder_early, through ckptfwd-launch):
  // its election lock as fd 3 and its pid. Not passed on to the HDF5 helper the forwarder
  // runs (close-on-exec: the lock must end when we close it).
  int election_fd = -1;
  if (const char* e = getenv("CKPTFWD_ELECTION_FD");
      e && !strcmp(e, "3") && fcntl(3, F_GETFD) >= 0) {
    election_fd = 3;
    fcntl(election_fd, F_SETFD, FD_CLOEXEC);
  }
  unsetenv("CKPTFWD_ELECTION_FD");
  long started_for = 0;
  if (const char* e = getenv("CKPTFWD_STARTED_FOR")) started_for = strtol(e, nullptr, 10);
  unsetenv("CKPTFWD_STARTED_FOR");
  if (!daemon && election_fd >= 0) {
    close(election_fd);
    election_fd = -1;
  }
  // CKPTFWD_LOG unset: a file beside the checkpoints (log_place.h), not a stderr nobody reads.
  // (a forwarder run in the foreground on a terminal keeps it)
  const bool default_log = cfg.log.empty() && (daemon || !isatty(2));
  const fwd::LogPlace log_place = fwd::log_place(cfg, paths);
  if (default_log) cfg.log = fwd::open_log_place(log_place);
  int ready = daemon ? fwd::daemonize(cfg.log, paths.socket, election_fd) : -1;
  fwd::log_init(cfg.log, cfg.log_level);
  fwd::log_set_identity(paths.node, paths.job);
  if (default_log) fwd::hold_fallback_log(log_place, cfg.log, fwd::log_fd());

  fwd::note_umask();  // before any thread exists: reading the umask means setting it
  sigset_t set;
  block_signals(&set);

  fwd::Forwarder f(cfg, paths);
  // The job's stats file beside the log in the store, wherever CKPTFWD_LOG sends the log.
  f.set_job_stats_file(fwd::stats_place(log_place));
  if (started_for > 0) {
    f.stay_while_alive(static_cast<pid_t>(started_for));
    // Tentative until a client names its settings (early_start_check.h): ours are those of
    // the environment the starter passed on.
    f.core().early_start.arm(wire::settings_digest(environ), [&f] { f.request_stop(); });
  }
  fwd::install_crash_handler(&f.core().stats);
  int rc = start_forwarder(f, ready, paths);
  if (election_fd >= 0) close(election_fd);  // listening (or leaving): others may look now
  if (rc >= 0) return rc;
  // Serving now: lines an earlier forwarder of the job left in the fallback file (killed,
  // or its store could not be reached at its exit) join the store's, unless one that is
  // still leaving writes there.
  if (default_log && cfg.log == log_place.preferred &&
      fwd::settle_log_file(log_place, log_place.fallback, true))
    LOG_INFO("moved the lines an earlier forwarder of this job left in %s into this log",
             log_place.fallback.c_str());
  watch_signals(f, set);
  rc = f.run();
  fwd::log_flush_repeats();
  if (default_log) fwd::settle_log_file(log_place, cfg.log);
  return rc;
}
