// Versions held by processes without a connection (Version::orphans): after a forwarder
// restart or a lost connection, a writer that lives on may still CLOSE its version on a
// new connection; one that died leaves its file as written (Service::reap_orphans).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "forwarder/util/log.h"
#include "forwarder/util/process_alive.h"
#include "forwarder/verbs/service.h"

namespace ckptfwd::fwd {

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
