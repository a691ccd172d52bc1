#include "forwarder/daemon/daemonize.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "forwarder/daemon/listener.h"
#include "store/manifest/owner_check.h"
#include "wire/protocol.h"
#include "wire/session.h"

namespace ckptfwd::fwd {

namespace {
long sock_read(int fd, void* p, size_t n) { return recv(fd, p, n, 0); }
long sock_write(int fd, const void* p, size_t n) { return send(fd, p, n, MSG_NOSIGNAL); }

// The daemon is our child until we exit; it is not waited for (it serves on, adopted by
// init or the job's subreaper once we are gone).
[[noreturn]] void wait_for_ready(int rd, const std::string& socket_path) {
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
  if (msg == "OK\n") _exit(0);
  if (msg.rfind("ERR ", 0) == 0) {
    msg = msg.substr(4);
  } else {
    // Empty or garbled: the daemon may be up all the same (someone else's bytes in the
    // pipe). Only a forwarder that answers is success; a silent one is a failure.
    if (forwarder_answers(socket_path)) _exit(0);
    msg = msg.empty() ? "the forwarder exited before it was ready; see its log (CKPTFWD_LOG, by "
                        "default <store>/logs/<job>.<node>.log)\n"
                      : "unreadable readiness message and no forwarder answers; see its log "
                        "(CKPTFWD_LOG, by default <store>/logs/<job>.<node>.log)\n";
  }
  fprintf(stderr, "ckptfwd-forwarder: error: %s", msg.c_str());
  if (msg.back() != '\n') fputc('\n', stderr);
  exit(1);
}

// What makes this process the daemon, once it is nobody's child to wait for.
// A process group of its own (a kill of the caller's group, or a terminal's ^C, does
// not reach us) in the caller's session, not a new one: with autogroup scheduling
// (kernel.sched_autogroup_enabled) a new session is a scheduling group of its own that
// the kernel weighs as much as the application's session whatever our threads' nice
// values, so bulk work at a low priority (worker_pool.h) would still take a share of
// the application's core. Started by an MPI rank (its rank variables are in our
// environment), a session of its own instead: launchers give every rank a session of
// its own (MPICH's Hydra does), so the caller's session is one rank's, and sharing that
// rank's scheduling group slowed both while the other ranks computed (docs/internals.md, "The
// application's writes go first"). No terminal is ever opened, so the session leader
// needs no second fork. SIGHUP ignored: a hang-up of the session's terminal is not ours
// to act on. Descriptors above 2 that we did not open are left alone: one may be the
// loader's LD_DEBUG_OUTPUT file, and taking its number would send the loader's lines into
// our pipe, MANIFEST or containers.
void detach_here(const std::string& log_file) {
  if (launched_as_mpi_rank())
    setsid();
  else
    setpgid(0, 0);
  signal(SIGHUP, SIG_IGN);
  if (chdir("/") != 0) {
  }
  int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  int out = null;
  if (!log_file.empty() && log_file != "stderr" && log_file != "syslog") {
    // As log_init: never through a symbolic link, never into another user's file.
    int lf = open_owned(log_file, O_WRONLY | O_APPEND | O_CREAT, 0600, nullptr);
    if (lf >= 0) out = lf;
  }
  // The standard streams: not the caller's pipes any more (a shell capturing our output
  // would wait for us). dup2 leaves 0..2 without close-on-exec, as standard streams are.
  if (null >= 0) dup2(null, 0);
  if (out >= 0) {
    dup2(out, 1);
    dup2(out, 2);
  }
  if (null > 2) close(null);
  if (out > 2 && out != null) close(out);
}
}  // namespace

bool forwarder_answers(const std::string& socket_path) {
  int fd = connect_control_socket(socket_path);
  if (fd < 0) return false;
  timeval tv{5, 0};  // a hung listener must not hang the caller
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  char pid[24];
  wire::fmt_i64(pid, getpid());
  const char* hello[] = {wire::kHello, pid, "0"};
  char buf[256];
  size_t len = wire::encode(buf, sizeof(buf), hello, 3);
  bool ok = len > 0 && wire::send_frame(fd, buf, len, sock_write);
  long got = ok ? wire::recv_frame(fd, buf, sizeof(buf), sock_read) : -1;
  wire::Fields reply;
  ok = got > 0 && wire::decode(buf, static_cast<size_t>(got), reply) &&
       strcmp(reply[0], wire::kOk) == 0;
  close(fd);
  return ok;
}

int daemonize(const std::string& log_file, const std::string& socket_path, int election_fd) {
  if (election_fd >= 0) {  // ckptfwd-launch forked us and is gone: no fork needed
    detach_here(log_file);
    return -1;
  }
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
    wait_for_ready(p[0], socket_path);
  }
  close(p[0]);
  detach_here(log_file);
  return p[1];  // the readiness pipe keeps the number pipe2 gave it (close-on-exec)
}

void signal_ready(int fd, bool ok, const std::string& why) {
  if (fd < 0) return;
  std::string msg = ok ? "OK\n" : "ERR " + why + "\n";
  ssize_t w = write(fd, msg.data(), msg.size());
  (void)w;
  close(fd);
}

}  // namespace ckptfwd::fwd
