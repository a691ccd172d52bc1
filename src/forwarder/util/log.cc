#include "forwarder/util/log.h"

#include <fcntl.h>
#include <syslog.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include "store/manifest/owner_check.h"

namespace ckptfwd::fwd {

namespace {
std::atomic<int> g_fd{2};
std::atomic<int> g_level{static_cast<int>(LogLevel::kWarn)};
std::atomic<bool> g_syslog{false};
const char* kNames[] = {"error", "warn", "info", "debug"};
}  // namespace

void log_init(const std::string& dest, const std::string& level) {
  for (int i = 0; i < 4; ++i)
    if (level == kNames[i]) g_level = i;
  int old = g_fd.exchange(2);
  if (old > 2) close(old);
  g_syslog = false;
  if (dest.empty() || dest == "stderr") return;
  if (dest == "syslog") {
    openlog("ckptfwd-forwarder", LOG_PID, LOG_USER);
    g_syslog = true;
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
  if (fd >= 0) g_fd = fd;
}

int log_fd() { return g_fd.load(); }

bool log_enabled(LogLevel l) { return static_cast<int>(l) <= g_level.load(); }

void log_msg(LogLevel l, const char* fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (g_syslog) {
    static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
    syslog(prio[static_cast<int>(l)], "%s", msg);
    return;
  }
  char line[2200];
  int n =
      snprintf(line, sizeof(line), "ckptfwd-forwarder: %s: %s\n", kNames[static_cast<int>(l)], msg);
  if (n > static_cast<int>(sizeof(line)) - 1) {
    n = sizeof(line) - 1;
    line[n - 1] = '\n';
  }
  // One write per line: O_APPEND keeps lines whole among the processes sharing the file.
  ssize_t w = write(g_fd.load(), line, static_cast<size_t>(n));
  (void)w;
}

}  // namespace ckptfwd::fwd
