#include "forwarder/util/log.h"

#include <fcntl.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "base/monotonic.h"
#include "forwarder/util/log_repeats.h"
#include "store/manifest/owner_check.h"

namespace ckptfwd::fwd {

namespace {
std::atomic<int> g_fd{2};
std::atomic<int> g_level{static_cast<int>(LogLevel::kWarn)};
std::atomic<bool> g_syslog{false};
const char* kNames[] = {"error", "warn", "info", "debug"};

std::mutex g_mu;  // what follows
std::string g_dest = "stderr";
std::string g_identity = "node=- job=-";
RepeatFilter g_repeats;

void write_line(LogLevel l, const char* msg) {
  std::string id;
  {
    std::lock_guard lk(g_mu);
    id = g_identity;
  }
  if (g_syslog) {
    static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
    syslog(prio[static_cast<int>(l)], "%s %s", id.c_str(), msg);
    return;
  }
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm utc{};
  gmtime_r(&ts.tv_sec, &utc);
  char when[40];
  size_t w = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &utc);
  snprintf(when + w, sizeof(when) - w, ".%03ldZ", ts.tv_nsec / 1'000'000);
  char line[2400];
  int n = snprintf(line, sizeof(line), "ckptfwd-forwarder: %s %s pid=%ld %s: %s\n", when,
                   id.c_str(), static_cast<long>(getpid()), kNames[static_cast<int>(l)], msg);
  if (n > static_cast<int>(sizeof(line)) - 1) {
    n = sizeof(line) - 1;
    line[n - 1] = '\n';
  }
  // One write per line: O_APPEND keeps lines whole among the processes sharing the file.
  ssize_t r = write(g_fd.load(), line, static_cast<size_t>(n));
  (void)r;
}

void say_unwritten(const std::vector<RepeatFilter::Pending>& pending) {
  for (const RepeatFilter::Pending& p : pending) {
    char msg[1200];
    snprintf(msg, sizeof(msg), "%llu more lines like this one were not written: %.900s",
             static_cast<unsigned long long>(p.count), p.sample.c_str());
    write_line(LogLevel::kWarn, msg);
  }
}
}  // namespace

void log_init(const std::string& dest, const std::string& level) {
  for (int i = 0; i < 4; ++i)
    if (level == kNames[i]) g_level = i;
  int old = g_fd.exchange(2);
  if (old > 2) close(old);
  g_syslog = false;
  auto set_dest = [](const std::string& d) {
    std::lock_guard lk(g_mu);
    g_dest = d;
  };
  set_dest("stderr");
  if (dest.empty() || dest == "stderr") return;
  if (dest == "syslog") {
    openlog("ckptfwd-forwarder", LOG_PID, LOG_USER);
    g_syslog = true;
    set_dest(dest);
    return;
  }
  // Never through a symbolic link, never into another user's file: either may be planted
  // where CKPTFWD_LOG names a directory others can write (/tmp).
  std::string refused;
  int fd = open_owned(dest, O_WRONLY | O_APPEND | O_CREAT, 0600, &refused);
  if (fd < 0) {
    dprintf(2,
            "ckptfwd-forwarder: warn: cannot open log file %s (%s); logging to stderr. "
            "Fix: set CKPTFWD_LOG to a writable file of yours\n",
            dest.c_str(), refused.empty() ? strerror(errno) : refused.c_str());
    return;
  }
  // Keep the fd above 2 so a later dup2 onto stderr does not close it.
  if (fd <= 2) {
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    fd = hi;
  }
  if (fd >= 0) {
    g_fd = fd;
    set_dest(dest);
  }
}

void log_set_identity(const std::string& node, const std::string& job) {
  std::lock_guard lk(g_mu);
  g_identity = "node=" + (node.empty() ? std::string("-") : node) +
               " job=" + (job.empty() ? std::string("-") : job);
}

std::string log_destination() {
  std::lock_guard lk(g_mu);
  return g_dest;
}

std::string log_pointer() {
  const std::string d = log_destination();
  return d == "stderr" ? "" : ". Log: " + d;
}

int log_fd() { return g_fd.load(); }

bool log_enabled(LogLevel l) { return static_cast<int>(l) <= g_level.load(); }

void log_msg(LogLevel l, const char* fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  std::vector<RepeatFilter::Pending> pending;
  RepeatFilter::Verdict v;
  // Warnings only: an error is written every time (each may name a file a user must know
  // about, a corrupt one say).
  if (l == LogLevel::kWarn && g_level.load() < static_cast<int>(LogLevel::kDebug)) {
    // A site that formats only "%s" logs many different messages: keyed by the text.
    const uint64_t key = strcmp(fmt, "%s") == 0
                             ? std::hash<std::string_view>{}(std::string_view(msg))
                             : static_cast<uint64_t>(reinterpret_cast<uintptr_t>(fmt));
    const int64_t now = monotonic_ns();
    std::lock_guard lk(g_mu);
    v = g_repeats.admit(key, now, msg);
    if (g_repeats.due(now)) pending = g_repeats.take_pending();
  }
  say_unwritten(pending);
  if (!v.write) return;
  if (v.unwritten_before > 0) {
    size_t len = strlen(msg);
    snprintf(msg + len, sizeof(msg) - len, " (%llu more like this one before it not written)",
             static_cast<unsigned long long>(v.unwritten_before));
  }
  write_line(l, msg);
}

void log_flush_repeats() {
  std::vector<RepeatFilter::Pending> pending;
  {
    std::lock_guard lk(g_mu);
    pending = g_repeats.take_pending();
  }
  say_unwritten(pending);
}

}  // namespace ckptfwd::fwd
