#include "forwarder/daemon/log_place.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "forwarder/util/store_paths.h"
#include "store/manifest/owner_check.h"

namespace ckptfwd::fwd {

namespace {
// dir made 0700 when missing; true if it is a directory (not through a symbolic link).
bool own_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return false;
  struct stat st {};
  return ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The store's .ckptfwd and its logs/, never the directory the store sits in.
bool make_log_dir(const std::string& file) {
  const std::string logs = dirname_of(file);
  const std::string store = dirname_of(logs);
  struct stat st {};
  if (::stat(dirname_of(store).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  return own_dir(store) && own_dir(logs);
}
}  // namespace

LogPlace log_place(const Config& cfg, const SessionPaths& paths) {
  LogPlace p;
  const std::string name = std::string(paths.job) + "." + paths.node + ".log";
  std::vector<std::string> stores = known_stores(cfg);
  if (!stores.empty()) p.preferred = stores.front() + "/logs/" + name;
  p.fallback = std::string(paths.stage_root) + "/ckptfwd-log-" + std::to_string(geteuid()) + "-" +
               paths.job + "-" + paths.node + ".log";
  return p;
}

std::string open_log_place(const LogPlace& place) {
  if (!place.preferred.empty() && make_log_dir(place.preferred)) return place.preferred;
  ::mkdir(dirname_of(place.fallback).c_str(), 0700);  // (the stage root, /dev/shm as a rule)
  return place.fallback;
}

std::string stats_place(const LogPlace& place) {
  const std::string& log = place.preferred;
  if (log.size() <= 4 || log.compare(log.size() - 4, 4, ".log") != 0) return "";
  return log.substr(0, log.size() - 4) + ".stats.jsonl";
}

bool make_store_logs_dir(const std::string& file) { return make_log_dir(file); }

bool settle_log_file(const LogPlace& place, const std::string& used, bool left_behind) {
  if (used != place.fallback || place.preferred.empty() || !make_log_dir(place.preferred))
    return false;
  int in = ::open(place.fallback.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (in < 0) return false;
  // A forwarder still writing it holds a shared lock (hold_fallback_log).
  if (left_behind && ::flock(in, LOCK_EX | LOCK_NB) != 0) {
    ::close(in);
    return false;
  }
  int out = open_owned(place.preferred, O_WRONLY | O_APPEND | O_CREAT, 0600, nullptr);
  bool ok = out >= 0;
  char buf[65536];
  for (ssize_t n; ok && (n = ::read(in, buf, sizeof(buf))) != 0;) {
    if (n < 0) {
      ok = errno == EINTR;
      continue;
    }
    ok = ::write(out, buf, static_cast<size_t>(n)) == n;
  }
  ::close(in);
  if (out >= 0) ::close(out);
  if (ok) ::unlink(place.fallback.c_str());
  return ok;
}

void hold_fallback_log(const LogPlace& place, const std::string& used, int fd) {
  if (used == place.fallback && fd >= 0) ::flock(fd, LOCK_SH);  // released with the fd
}

}  // namespace ckptfwd::fwd
