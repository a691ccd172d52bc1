// exec replaces the library's memory but keeps the process, its fds and its pid. A shell
// running `cmd > /ckpt/file` opens the captured file, dup2s it onto 1 and execs cmd: the
// version must stay open until cmd is done. So exec passes the connection (made
// inheritable for the exec) and the open versions to the new image in CKPTFWD_ADOPT:
//   CKPTFWD_ADOPT=<socket fd>;<fd>,<vid>,<budget>,<mode>,<path length>:<path>;...
// The forwarder sees one connection from one pid throughout. If the new image runs
// without the library, the socket closes at its exit and the forwarder keeps the versions
// as written — what a direct write would have left. The connection's unused lease
// (wire/lease.h) goes along in CKPTFWD_ADOPT_LEASE=lease=<vid>.<budget>.<pid>: it is
// the connection's, and the forwarder hands no other while it is out.
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interpose/client/client.h"
#include "interpose/setup/state.h"
#include "interpose/track/adopt_codec.h"
#include "interpose/track/versions.h"
#include "interpose/wrap/real.h"

extern char** environ;

using namespace ckptfwd::interpose;

namespace {

constexpr char kAdopt[] = "CKPTFWD_ADOPT=";
constexpr size_t kAdoptLen = sizeof(kAdopt) - 1;
constexpr char kAdoptLease[] = "CKPTFWD_ADOPT_LEASE=";
constexpr size_t kAdoptLeaseLen = sizeof(kAdoptLease) - 1;

struct ExecPrep {
  char* var = nullptr;                            // "CKPTFWD_ADOPT=..."
  char** envp = nullptr;                          // copy of the caller's env with var
  int sock = -1;                                  // made inheritable for the exec
  char lease_var[sizeof(kAdoptLease) + 96] = {};  // "CKPTFWD_ADOPT_LEASE=..." or ""
  ckptfwd::wire::Lease lease;                     // taken for it (vid 0: none)
  unsigned lease_conn = 0;
};

bool append(char*& buf, size_t& len, size_t& cap, const char* s, size_t n) {
  if (len + n + 1 > cap) {
    size_t ncap = (cap + n + 1) * 2;
    char* nb = static_cast<char*>(realloc(buf, ncap));
    if (!nb) return false;
    buf = nb;
    cap = ncap;
  }
  memcpy(buf + len, s, n);
  len += n;
  buf[len] = '\0';
  return true;
}

// Returns the env the real exec should get (envp itself when nothing is handed over).
char* const* prepare(char* const* envp, ExecPrep& p) {
  if (t_busy || !g_settings.active || !owner_process()) return envp;
  Busy busy;
  int saved = errno;
  int sock = client_socket();
  if (sock < 0) {
    errno = saved;
    return envp;
  }
  char* buf = nullptr;
  size_t len = 0;
  size_t cap = 0;
  char head[32];
  size_t hn = format_adopt_head(head, sizeof(head), sock);
  bool ok = hn > 0 && append(buf, len, cap, kAdopt, kAdoptLen) && append(buf, len, cap, head, hn);
  g_fds.for_each([&](int fd, Version* v) {
    if (!ok || v->view || !v->owned.load() || v->abandoned.load() || v->close_sent.load()) return;
    int fl = real::fcntl()(fd, F_GETFD);
    if (fl < 0 || (fl & FD_CLOEXEC)) return;  // closes at exec: released by the kernel
    AdoptRecord r;
    r.fd = fd;
    r.vid = v->vid;
    r.budget = v->budget;
    r.mode = v->mode & 07777;
    r.path = v->path;
    r.path_len = strlen(v->path);
    char rec[PATH_MAX + 128];
    size_t rn = format_adopt_record(rec, sizeof(rec), r);
    ok = rn > 0 && append(buf, len, cap, rec, rn);
  });
  size_t count = 0;
  while (envp && envp[count]) ++count;
  char** env = ok ? static_cast<char**>(malloc((count + 3) * sizeof(char*))) : nullptr;
  if (!env) {
    free(buf);
    errno = saved;
    return envp;
  }
  size_t k = 0;
  for (size_t i = 0; i < count; ++i)
    if (strncmp(envp[i], kAdopt, kAdoptLen) != 0 &&
        strncmp(envp[i], kAdoptLease, kAdoptLeaseLen) != 0)
      env[k++] = envp[i];
  env[k++] = buf;
  if (client_take_lease(&p.lease, &p.lease_conn)) {
    memcpy(p.lease_var, kAdoptLease, kAdoptLeaseLen);
    if (ckptfwd::wire::format_lease(p.lease, p.lease_var + kAdoptLeaseLen,
                                    sizeof(p.lease_var) - kAdoptLeaseLen))
      env[k++] = p.lease_var;
  }
  env[k] = nullptr;
  real::fcntl()(sock, F_SETFD, 0);  // inheritable across this exec only
  p.var = buf;
  p.envp = env;
  p.sock = sock;
  errno = saved;
  return env;
}

// exec failed: the process goes on as before.
void undo(ExecPrep& p) {
  if (!p.envp) return;
  int saved = errno;
  if (p.lease.vid) client_put_back_lease(p.lease, p.lease_conn);
  real::fcntl()(p.sock, F_SETFD, FD_CLOEXEC);
  free(p.var);
  free(p.envp);
  errno = saved;
}

// Collects execl-style arguments (arg0 ... NULL) into a NULL-terminated array.
template <class F>
int with_list(const char* arg0, va_list ap, bool has_env, F&& f) {
  va_list count_ap;
  va_copy(count_ap, ap);
  size_t n = 1;
  while (va_arg(count_ap, const char*)) ++n;
  va_end(count_ap);
  char** argv = static_cast<char**>(alloca((n + 1) * sizeof(char*)));
  argv[0] = const_cast<char*>(arg0);
  for (size_t i = 1; i <= n; ++i) argv[i] = va_arg(ap, char*);  // argv[n] is the NULL
  char* const* envp = has_env ? va_arg(ap, char* const*) : environ;
  return f(argv, envp);
}

int do_execve(const char* path, char* const* argv, char* const* envp) {
  ExecPrep p;
  char* const* env = prepare(envp, p);
  int rc = real::execve()(path, argv, env);
  undo(p);
  return rc;
}

int do_execvpe(const char* file, char* const* argv, char* const* envp) {
  ExecPrep p;
  char* const* env = prepare(envp, p);
  int rc = real::execvpe()(file, argv, env);
  undo(p);
  return rc;
}

}  // namespace

namespace ckptfwd::interpose {

// Parses CKPTFWD_ADOPT (see the top of this file) at init of the new image.
void adopt_after_exec() {
  const char* spec = getenv("CKPTFWD_ADOPT");
  if (!spec || !*spec) return;
  int sock = -1;
  const char* p = parse_adopt_head(spec, sock);
  if (p && client_adopt_socket(sock)) {
    AdoptRecord r;
    while (*p && (p = parse_adopt_record(p, r)) != nullptr) {
      char path[PATH_MAX];
      memcpy(path, r.path, r.path_len);
      path[r.path_len] = '\0';
      // The staged file is what the fd points at.
      char link[32];
      char staged[PATH_MAX];
      snprintf(link, sizeof(link), "/proc/self/fd/%d", r.fd);
      ssize_t n = readlink(link, staged, sizeof(staged) - 1);
      if (n <= 0) continue;  // closed meanwhile: the forwarder keeps it as written
      staged[n] = '\0';
      Version* v = version_create(r.vid, r.budget, r.mode, path, staged);
      Version* prev = nullptr;
      if (!v) continue;
      if (!g_fds.attach(r.fd, v, &prev)) version_destroy(v);
      if (prev) release_version(prev);
    }
    ckptfwd::wire::Lease lease;
    const char* l = getenv("CKPTFWD_ADOPT_LEASE");
    if (l && ckptfwd::wire::parse_lease(l, lease)) client_put_back_lease(lease, 0);
  }
  unsetenv("CKPTFWD_ADOPT");  // children of this image get their own hand-over
  unsetenv("CKPTFWD_ADOPT_LEASE");
}

}  // namespace ckptfwd::interpose

CKPTFWD_EXPORT int execve(const char* path, char* const* argv, char* const* envp) {
  return do_execve(path, argv, envp);
}
CKPTFWD_EXPORT int execv(const char* path, char* const* argv) {
  return do_execve(path, argv, environ);
}
CKPTFWD_EXPORT int execvpe(const char* file, char* const* argv, char* const* envp) {
  return do_execvpe(file, argv, envp);
}
CKPTFWD_EXPORT int execvp(const char* file, char* const* argv) {
  return do_execvpe(file, argv, environ);
}
CKPTFWD_EXPORT int fexecve(int fd, char* const* argv, char* const* envp) {
  ExecPrep p;
  char* const* env = prepare(envp, p);
  int rc = real::fexecve()(fd, argv, env);
  undo(p);
  return rc;
}
CKPTFWD_EXPORT int execl(const char* path, const char* arg0, ...) {
  va_list ap;
  va_start(ap, arg0);
  int rc = with_list(arg0, ap, false, [&](char* const* argv, char* const* envp) {
    return do_execve(path, argv, envp);
  });
  va_end(ap);
  return rc;
}
CKPTFWD_EXPORT int execle(const char* path, const char* arg0, ...) {
  va_list ap;
  va_start(ap, arg0);
  int rc = with_list(arg0, ap, true, [&](char* const* argv, char* const* envp) {
    return do_execve(path, argv, envp);
  });
  va_end(ap);
  return rc;
}
CKPTFWD_EXPORT int execlp(const char* file, const char* arg0, ...) {
  va_list ap;
  va_start(ap, arg0);
  int rc = with_list(arg0, ap, false, [&](char* const* argv, char* const* envp) {
    return do_execvpe(file, argv, envp);
  });
  va_end(ap);
  return rc;
}
