#include "schema/hdf5_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

extern char** environ;

namespace ckptfwd::schema {

namespace {

constexpr size_t kMaxOutput = 64u << 20;  // a map this big is not a map
constexpr size_t kMaxReason = 300;        // bytes of the helper's first stderr line kept

using Clock = std::chrono::steady_clock;

// Closes a descriptor once, on every path out.
struct Fd {
  int fd = -1;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) close(fd);
    fd = -1;
  }
};

// The running helper, killed (with anything it started in its process group) and reaped
// on every path out, so no failure leaves a zombie or a stray process behind.
struct Child {
  pid_t pid = -1;
  int status = 0;
  ~Child() { kill_and_reap(); }
  void kill_and_reap() {
    if (pid <= 0) return;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    reap();
  }
  void reap() {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
  }
  // Waits for the exit until deadline; false if it is still running then.
  bool wait_until(Clock::time_point deadline) {
    for (;;) {
      pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        pid = -1;
        return true;
      }
      if (r < 0 && errno != EINTR) {  // not our child any more (someone reaped it)
        pid = -1;
        return true;
      }
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
};

std::string first_line(const std::string& s) {
  std::string l = s.substr(0, s.find('\n'));
  while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.pop_back();
  return l.substr(0, kMaxReason);
}

std::string base_name(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

// Starts `helper file` with stdout and stderr on the write ends of two pipes, stdin from
// /dev/null, no other descriptor of ours (the forwarder's sockets and staged files), the
// default signal dispositions and an empty mask, in a process group of its own (so that a
// timeout kills whatever it started too).
int spawn_helper(const std::string& helper, const std::string& file, int out_w, int err_w,
                 pid_t* pid) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&at);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_w, 1);
  posix_spawn_file_actions_adddup2(&fa, err_w, 2);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &all);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::string sep = "--";
  char* argv[] = {const_cast<char*>(helper.c_str()), sep.data(), const_cast<char*>(file.c_str()),
                  nullptr};
  // Our environment without LD_PRELOAD: the helper reads staged files, which the capture
  // library must never intercept, whoever started the forwarder with it.
  std::vector<char*> env;
  for (char** e = environ; e && *e; ++e)
    if (strncmp(*e, "LD_PRELOAD=", 11) != 0) env.push_back(*e);
  env.push_back(nullptr);
  int rc = posix_spawn(pid, helper.c_str(), &fa, &at, argv, env.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  return rc;
}

// Appends what is readable on fd to buf (up to cap bytes; more is read and dropped);
// false at end of file or on an error.
bool drain(int fd, std::string& buf, size_t cap, bool* over) {
  char tmp[65536];
  ssize_t n = read(fd, tmp, sizeof tmp);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  size_t room = buf.size() < cap ? cap - buf.size() : 0;
  buf.append(tmp, std::min(room, static_cast<size_t>(n)));
  if (static_cast<size_t>(n) > room) *over = true;
  return true;
}

}  // namespace

int64_t hdf5_superblock_offset(const uint8_t* d, uint64_t n) {
  static const uint8_t sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  for (uint64_t off = 0; off <= n && n - off >= 8; off = off ? off * 2 : 512)
    if (memcmp(d + off, sig, 8) == 0) return static_cast<int64_t>(off);
  return -1;
}

std::string default_helper(const std::string& name) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return name;
  std::string exe(buf, static_cast<size_t>(n));
  size_t s = exe.rfind('/');
  const std::string dir = s == std::string::npos ? std::string(".") : exe.substr(0, s);
  // Installed: <prefix>/libexec/ckptfwd/ (a helper, not a command); built: beside us.
  const std::string installed = dir + "/../libexec/ckptfwd/" + name;
  if (access(installed.c_str(), X_OK) == 0) return installed;
  return dir + "/" + name;
}

std::string default_hdf5_helper() { return default_helper("ckptfwd-h5infer"); }

bool infer_hdf5(const std::string& helper, const std::string& file, uint64_t size, int timeout_ms,
                VariableMap& out, std::string* why) {
  const std::string who = base_name(helper.empty() ? "ckptfwd-h5infer" : helper);
  auto fail = [&](const std::string& reason) {
    if (why) *why = who + " on " + file + ": " + reason;
    return false;
  };
  if (helper.empty() || access(helper.c_str(), X_OK) != 0)
    return fail("helper not found at " + (helper.empty() ? std::string("''") : helper) +
                ": build ckptfwd-h5infer");
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms > 0 ? timeout_ms : 0);

  // O_CLOEXEC: a helper another thread starts meanwhile must not inherit these ends, or
  // this read would not see end of file until that other helper exits.
  int po[2], pe[2];
  if (pipe2(po, O_CLOEXEC) != 0) return fail(std::string("pipe: ") + strerror(errno));
  Fd out_r{po[0]}, out_w{po[1]};
  if (pipe2(pe, O_CLOEXEC) != 0) return fail(std::string("pipe: ") + strerror(errno));
  Fd err_r{pe[0]}, err_w{pe[1]};

  Child child;
  int rc = spawn_helper(helper, file, out_w.fd, err_w.fd, &child.pid);
  if (rc != 0) {
    child.pid = -1;
    if (rc == ENOENT || rc == EACCES || rc == ENOEXEC)
      return fail("helper not found at " + helper + " (" + strerror(rc) +
                  "): build ckptfwd-h5infer");
    return fail(std::string("cannot start the helper: ") + strerror(rc));
  }
  out_w.reset();
  err_w.reset();

  std::string data, err;
  bool over = false, err_over = false;
  while (out_r.fd >= 0 || err_r.fd >= 0) {
    // Rounded up: a truncated 0.7 ms would give up before the deadline.
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      child.kill_and_reap();
      return fail("timed out after " + std::to_string(timeout_ms) + " ms");
    }
    pollfd p[2] = {{out_r.fd, POLLIN, 0}, {err_r.fd, POLLIN, 0}};
    int n = poll(p, 2, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) return fail(std::string("poll: ") + strerror(errno));
    if (n <= 0) continue;
    if (p[0].revents && !drain(out_r.fd, data, kMaxOutput, &over)) out_r.reset();
    if (over) {
      child.kill_and_reap();
      return fail("output exceeds " + std::to_string(kMaxOutput >> 20) + " MiB");
    }
    if (p[1].revents && !drain(err_r.fd, err, 4096, &err_over)) err_r.reset();
  }
  if (!child.wait_until(deadline)) {
    child.kill_and_reap();
    return fail("timed out after " + std::to_string(timeout_ms) + " ms");
  }
  const int st = child.status;
  std::string said = first_line(err);
  if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    const char* name = sigabbrev_np(sig);
    return fail("crashed with signal " + std::to_string(sig) +
                (name ? std::string(" (SIG") + name + ")" : std::string()) +
                (said.empty() ? "" : ": " + said));
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    return fail("exited with status " + std::to_string(WEXITSTATUS(st)) +
                (said.empty() ? "" : ": " + said));
  size_t pos = 0;
  VariableMap m;
  std::string bad;
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  if (!decode_variable_map(bytes, data.size(), &pos, size, m, &bad))
    return fail("bad output: " + bad);
  if (pos != data.size()) return fail("bad output: bytes after the map");
  if (m.source != "hdf5") return fail("bad output: source '" + m.source + "', expected 'hdf5'");
  out = std::move(m);
  return true;
}

}  // namespace ckptfwd::schema
