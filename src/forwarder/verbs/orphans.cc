#include "forwarder/verbs/orphans.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "wire/proc_state.h"
#include "forwarder/util/log.h"
#include "forwarder/verbs/service.h"

namespace ckptfwd::fwd {

bool process_alive(long pid) {
  if (pid <= 0 || pid == static_cast<long>(getpid())) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  errno = 0;
  char state = proc_state::read_state(
      pid, [](const char* p, int f) { return ::open(p, f); }, ::close);
  // Unreadable: gone meanwhile (ENOENT), or no /proc (kill() said it exists).
  if (state == '?') return errno != ENOENT;
  return !proc_state::dead(state);
}

Clock::time_point Service::reap_orphans(bool* closed_some) {
  State& s = c_.state;
  std::vector<uint64_t> unheld;
  std::vector<std::pair<uint64_t, long>> gone;  // (vid, pid) of released references
  bool waiting = false;
  for (auto& [vid, v] : s.versions) {
    if (v.state != VState::kOpen || v.orphans.empty()) continue;
    for (auto it = v.orphans.begin(); it != v.orphans.end();) {
      if (process_alive(it->first)) {
        ++it;
        continue;
      }
      gone.push_back({vid, it->first});
      it = v.orphans.erase(it);
      if ((v.partial || v.created) && !v.extents_unknown) {  // its extents died with it
        v.extents_unknown = true;
        if (!v.created)
          LOG_WARN(
              "pid %ld died with %s (shared across nodes) open: its extents are unknown; "
              "committing the staged file's data extents",
              gone.back().second, v.path.c_str());
      }
    }
    if (v.holders.empty() && v.orphans.empty())
      unheld.push_back(vid);
    else
      waiting = waiting || !v.orphans.empty();
  }
  for (auto& [vid, pid] : gone)
    if (Version* v = s.find(vid); v && (v->holders.size() || v->orphans.size())) s.rewrite_meta(*v);
  for (uint64_t vid : unheld) {
    long pid = 0;
    for (auto& g : gone)
      if (g.first == vid) pid = g.second;
    close_unheld(vid, pid);
    *closed_some = true;
  }
  for (auto it = s.closed_by_pid.begin(); it != s.closed_by_pid.end();)
    it = process_alive(it->first) ? std::next(it) : s.closed_by_pid.erase(it);
  return waiting ? Clock::now() + std::chrono::milliseconds(250) : Clock::time_point::max();
}

}  // namespace ckptfwd::fwd
