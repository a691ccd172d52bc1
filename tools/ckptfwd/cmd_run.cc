// ckptfwd run [--capture GLOBS] -- CMD...
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli.h"
#include "forwarder_client.h"
#include "staged_versions.h"
#include "wire/setting_value.h"

namespace ckptfwd::cli {

namespace {

const char kHelp[] =
    "usage: ckptfwd run [--capture GLOBS] [--] CMD [ARGS...]\n"
    "\n"
    "Runs CMD with the preload library (LD_PRELOAD gets <dir of ckptfwd>/../lib/libckptfwd.so\n"
    "prepended), waits for it, then drains the forwarder so the checkpoint is on the store\n"
    "when this command returns. Exits with CMD's status (128+N if a signal N killed it), or\n"
    "1 if CMD succeeded but the drain failed (a closed file version of the job on this node\n"
    "is not committed: see ckptfwd drain --help). SIGTERM and SIGHUP are passed on to CMD.\n"
    "\n"
    "  --capture GLOBS   colon-separated globs of the files to capture, e.g.\n"
    "                    '/scratch/run/ckpt/*'; relative globs are made absolute against the\n"
    "                    current directory. Default: CKPTFWD_CAPTURE from the environment.\n"
    "\n"
    "Every other setting comes from the environment or CKPTFWD_CONFIG's file as usual\n"
    "(CKPTFWD_STORE, CKPTFWD_JOB_ID, CKPTFWD_STAGE_DIR, ...; docs/settings.md).\n";

volatile sig_atomic_t g_child = 0;

void forward_signal(int sig) {
  if (g_child > 0) kill(g_child, sig);
}

}  // namespace

int cmd_run(const Args& args, const std::string& self_exe) {
  std::vector<std::string> cmd;
  std::string capture;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      cmd.assign(args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    } else if (a == "--help" || a == "-h") {
      fputs(kHelp, stdout);
      return 0;
    } else if (a == "--capture") {
      if (i + 1 >= args.size()) return usage_error("run", "--capture needs globs");
      capture = args[++i];
    } else if (a.rfind("--capture=", 0) == 0) {
      capture = a.substr(10);
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("run", "unknown option " + a);
    } else {
      cmd.assign(args.begin() + static_cast<long>(i), args.end());
      break;
    }
  }
  if (cmd.empty()) return usage_error("run", "missing the command to run (ckptfwd run -- CMD...)");
  if (capture.empty()) {
    const char* env = wire::setting_value("CKPTFWD_CAPTURE");
    if (!env || !*env) {
      error("run: nothing to capture: pass --capture '/path/ckpt/*' or set CKPTFWD_CAPTURE");
      return 2;
    }
    capture = env;
  }
  capture = absolute_globs(capture);

  std::string dir = self_exe.substr(0, self_exe.rfind('/'));
  std::string lib = dir + "/../lib/libckptfwd.so";
  char real[PATH_MAX];
  if (!realpath(lib.c_str(), real)) {
    error("run: cannot find the preload library at " + lib +
          " (build it with `make`, or install ckptfwd with `make install`)");
    return 1;
  }
  std::string preload = real;
  if (const char* old = getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;

  // Here too, not only in the child: outside a batch system the job (and so the session
  // drained below) is named after the globs (wire/session.h job_identity).
  setenv("CKPTFWD_CAPTURE", capture.c_str(), 1);
  pid_t pid = fork();
  if (pid < 0) {
    error(std::string("run: fork: ") + strerror(errno));
    return 1;
  }
  if (pid == 0) {
    setenv("LD_PRELOAD", preload.c_str(), 1);
    std::vector<char*> argv;
    for (std::string& s : cmd) argv.push_back(s.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    fprintf(stderr, "ckptfwd: run: cannot execute %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  g_child = pid;
  // Ctrl-C reaches CMD through the terminal's process group; this process stays to drain.
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  int drain_rc = drain_forwarder(true);
  return rc == 0 && drain_rc != 0 ? 1 : rc;
}

}  // namespace ckptfwd::cli
