#include "forwarder/daemonize.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ckptfwd::fwd {

namespace {
[[noreturn]] void wait_for_ready(int rd, pid_t child) {
  std::string msg;
  char buf[512];
  for (;;) {
    ssize_t n = read(rd, buf, sizeof(buf));
    if (n > 0) {
      msg.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  int st;
  while (waitpid(child, &st, 0) < 0 && errno == EINTR) {
  }
  if (msg.rfind("OK", 0) == 0) _exit(0);
  if (msg.rfind("ERR ", 0) == 0) msg = msg.substr(4);
  if (msg.empty()) msg = "the forwarder exited before it was ready; see CKPTFWD_LOG\n";
  fprintf(stderr, "ckptfwd-forwarder: error: %s", msg.c_str());
  if (msg.back() != '\n') fputc('\n', stderr);
  exit(1);
}
}  // namespace

int daemonize(const std::string& log_file) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    fprintf(stderr, "ckptfwd-forwarder: error: pipe: %s\n", strerror(errno));
    exit(1);
  }
  fflush(nullptr);
  pid_t child = fork();
  if (child < 0) {
    fprintf(stderr, "ckptfwd-forwarder: error: fork: %s\n", strerror(errno));
    exit(1);
  }
  if (child > 0) {
    close(p[1]);
    wait_for_ready(p[0], child);
  }
  close(p[0]);
  setsid();
  pid_t grandchild = fork();
  if (grandchild < 0) {
    dprintf(p[1], "ERR fork: %s\n", strerror(errno));
    _exit(1);
  }
  if (grandchild > 0) _exit(0);  // the daemon is not a session leader: no controlling tty
  // Keep only the readiness pipe (as fd 3) above stderr.
  int ready = p[1];
  if (ready != 3) {
    dup2(ready, 3);
    close(ready);
    ready = 3;
  }
  fcntl(ready, F_SETFD, FD_CLOEXEC);
  close_range(4, ~0U, 0);
  if (chdir("/") != 0) {
  }
  int null = open("/dev/null", O_RDWR);
  int out = null;
  if (!log_file.empty() && log_file != "stderr" && log_file != "syslog") {
    int lf = open(log_file.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (lf >= 0) out = lf;
  }
  dup2(null, 0);
  dup2(out, 1);
  dup2(out, 2);
  if (null > 2) close(null);
  if (out > 2 && out != null) close(out);
  return ready;
}

void signal_ready(int fd, bool ok, const std::string& why) {
  if (fd < 0) return;
  std::string msg = ok ? "OK\n" : "ERR " + why + "\n";
  ssize_t w = write(fd, msg.data(), msg.size());
  (void)w;
  close(fd);
}

}  // namespace ckptfwd::fwd
