#include "forwarder/state/state.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "forwarder/staging/staging.h"
#include "forwarder/util/log.h"
#include "forwarder/util/store_paths.h"

namespace ckptfwd::fwd {

int64_t realtime_ns_of(const struct timespec& ts) {
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

static int64_t realtime_now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return realtime_ns_of(ts);
}

State::State(const Config& cfg, Stats& stats, std::string session_dir)
    : cfg_(cfg), stats_(stats), dir_(std::move(session_dir)) {
  journal.set_dir(dir_);
  catalogs.keep_versions(cfg.keep);
  catalogs.default_places(cfg.store.empty());
  costs.publish_to(&stats_, CheckpointCosts::kMerge);
}

Version* State::find(uint64_t vid) {
  auto it = versions.find(vid);
  return it == versions.end() ? nullptr : &it->second;
}

void State::index_all_if_stale() {
  if (indexed_ == versions.size()) return;
  by_path_.clear();
  for (auto& [vid, v] : versions) by_path_[v.path].insert(vid);
  indexed_ = versions.size();
}

// f(Version&) for every version whose path is path, in vid order.
template <class F>
void State::for_each_of(const std::string& path, F&& f) {
  index_all_if_stale();
  auto it = by_path_.find(path);
  if (it == by_path_.end()) return;
  for (uint64_t vid : it->second) {
    auto v = versions.find(vid);
    if (v != versions.end() && v->second.path == path) f(v->second);
  }
}

Version& State::insert_recovered(uint64_t vid, const std::string& path) {
  index_all_if_stale();
  Version& v = versions[vid];
  v.vid = vid;
  v.path = path;
  by_path_[path].insert(vid);
  ++indexed_;
  return v;
}

void State::set_path(Version& v, const std::string& to) {
  index_all_if_stale();
  auto it = by_path_.find(v.path);
  if (it != by_path_.end() && it->second.erase(v.vid) && it->second.empty()) by_path_.erase(it);
  v.path = to;
  by_path_[to].insert(v.vid);
}

Version* State::newest(const std::string& path) {
  Version* best = nullptr;
  for_each_of(path, [&](Version& v) {
    if (!v.dropped && v.ready && (!best || v.order > best->order)) best = &v;
  });
  return best;
}

bool State::has_version(const std::string& path) {
  bool any = false;
  for_each_of(path, [&](Version& v) { any = any || !v.dropped; });
  return any;
}

Version* State::open_for_write(const std::string& path, bool* preparing) {
  Version* best = nullptr;
  *preparing = false;
  for_each_of(path, [&](Version& v) {
    if (v.dropped || v.state != VState::kOpen) return;
    if (!v.ready)
      *preparing = true;
    else if (!best || v.order > best->order)
      best = &v;
  });
  return best;
}

std::vector<Version*> State::pending_of(const std::string& path) {
  std::vector<Version*> out;
  for_each_of(path, [&](Version& v) {
    if (!v.dropped) out.push_back(&v);
  });
  return out;
}

Version& State::add(const std::string& path, int rank, long pid, uint64_t client, uint32_t mode,
                    uint64_t vid) {
  if (vid == 0) vid = next_vid++;
  index_all_if_stale();
  Version& v = versions[vid];
  v.vid = vid;
  v.order = next_order++;
  v.path = path;
  v.rank = rank;
  v.pid = pid;
  v.client = client;
  v.mode = mode & 07777;
  v.opened_at = Clock::now();
  v.opened_ns = realtime_now_ns();
  v.data_path = staged_data_path(dir_, vid);
  v.meta_path = staged_meta_path(dir_, vid);
  by_path_[path].insert(vid);
  ++indexed_;
  update_pending_gauge();
  return v;
}

void State::mark_closed(Version& v, bool mode_from_file) {
  struct stat st;
  if (stat(v.data_path.c_str(), &st) == 0) {
    v.size = static_cast<uint64_t>(st.st_size);
    v.mtime_ns = realtime_ns_of(st.st_mtim);
    // Staged files are 0600. Other bits mean the application fchmod'ed its fd and the
    // library could not tell us (forwarder briefly unreachable, an unwrapped path):
    // those bits are the version's mode; the file goes back to private.
    uint32_t fm = st.st_mode & 07777;
    if (mode_from_file && fm != kStagedFileMode) {
      v.mode = fm;
      chmod(v.data_path.c_str(), kStagedFileMode);
    }
  }
  v.state = VState::kClosed;
  // The recovery protocol (staging.h): from here on a crash commits it, with this size.
  rewrite_meta(v);
  v.close_seq = next_close_seq++;
  v.closed_at = last_close = Clock::now();
  closed_bytes_unpicked += v.size;
  if (close_wakes_batcher(v)) work_cv.notify_all();
}

void State::reopen(Version& v) {
  closed_bytes_unpicked -= std::min(closed_bytes_unpicked, v.size);
  v.state = VState::kOpen;
  v.wave = 0;
  v.closer_pid = 0;
  v.opened_at = Clock::now();
  costs.reopened(v.vid);
}

bool State::close_wakes_batcher(const Version& v) const {
  // The soonest a close makes a batch due: at once when someone waits (fsync, exit,
  // drain) or a batch is full, else a batch window after it (batcher.cc, pick). The
  // batcher, asleep until then or sooner, looks again by itself.
  return waiters > 0 || draining || closed_bytes_unpicked >= cfg_.batch_bytes ||
         batcher_sleeps_until > v.closed_at + std::chrono::milliseconds(cfg_.batch_window_ms);
}

void State::drop(Version& v) {
  v.dropped = true;
  if (v.state == VState::kClosed || v.state == VState::kFailed) forget(v.vid);
  done_cv.notify_all();
}

size_t State::drop_all(const std::string& path, const std::function<bool(const Version&)>& which) {
  // By vid: a drop may forget a version, and with it its place in the by-path index.
  std::vector<uint64_t> vids;
  for (Version* v : pending_of(path))
    if (!which || which(*v)) vids.push_back(v->vid);
  for (uint64_t vid : vids)
    if (Version* v = find(vid)) drop(*v);
  return vids.size();
}

void State::forget(uint64_t vid) {
  costs.forgotten(vid);
  auto it = versions.find(vid);
  if (it == versions.end()) return;
  // A dropped version's description goes at once (a recovery must not commit it again);
  // a committed one's with its batch (lease_journal_writer.h).
  bool retire = retire_grace.count() > 0;
  if (it->second.journaled) {
    if (!it->second.dropped)
      journal.gone(vid);
    else if (!journal.gone_now(vid))
      retire = false;  // described still: its data file goes at once
  }
  if (!it->second.pending_store.empty()) pending.settled(it->second.pending_store, vid);
  if (auto c = closed_by_pid.find(it->second.closer_pid); c != closed_by_pid.end()) {
    c->second.erase(vid);
    if (c->second.empty()) closed_by_pid.erase(c);
  }
  for (const std::string& f : it->second.ext_files) unlink((dir_ + "/" + f).c_str());
  for (const std::string& f : it->second.hint_files) unlink((dir_ + "/" + f).c_str());
  if (retire) {
    remove_staged("", it->second.meta_path);
    retired_.push_back({Clock::now() + retire_grace, it->second.data_path});
    work_cv.notify_all();  // the batcher thread purges
  } else {
    remove_staged(it->second.data_path, it->second.meta_path);
  }
  auto ix = by_path_.find(it->second.path);
  if (ix != by_path_.end() && ix->second.erase(vid)) {
    if (ix->second.empty()) by_path_.erase(ix);
    --indexed_;
  }
  versions.erase(it);
  update_pending_gauge();
  done_cv.notify_all();
}

Clock::time_point State::purge_retired(bool all, std::vector<std::string>* doomed) {
  auto now = Clock::now();
  auto next = Clock::time_point::max();
  std::vector<std::pair<Clock::time_point, std::string>> keep;
  for (auto& r : retired_) {
    if (all || r.first <= now) {
      if (doomed)
        doomed->push_back(std::move(r.second));
      else
        remove_staged(r.second, "");
    } else {
      next = std::min(next, r.first);
      keep.push_back(std::move(r));
    }
  }
  retired_.swap(keep);
  // Views in deadline order: only the expired ones are looked at (a restart serves
  // thousands of views, and the batcher purges at every wake).
  while (!view_order_.empty() && (all || view_order_.begin()->first <= now)) {
    const std::string view = view_order_.begin()->second;
    LOG_DEBUG("read view %s released (unused for %lld ms)", view.c_str(),
              static_cast<long long>(view_grace.count()));
    ::unlink(view.c_str());
    if (view_released_) view_released_(view);
    view_order_.erase(view_order_.begin());
    views_.erase(view);
  }
  if (!view_order_.empty()) next = std::min(next, view_order_.begin()->first);
  return next;
}

void State::serve_view(const std::string& view, bool restoring) {
  auto deadline = restoring ? Clock::time_point::max() : Clock::now() + view_grace;
  // The batcher sleeps until the earliest deadline at most: it needs waking only for an
  // earlier one (a notification per served view would make it rescan at every open).
  bool earlier = view_order_.empty() || deadline < view_order_.begin()->first;
  auto [it, fresh] = views_.try_emplace(view, deadline);
  if (!fresh) {
    view_order_.erase({it->second, view});
    it->second = deadline;
  }
  view_order_.insert({deadline, view});
  if (earlier) work_cv.notify_all();
}

void State::rewrite_meta(const Version& v) {
  // Still copying its starting bytes (or an fsync snapshot's): it has no .meta yet, and
  // gets one with everything current once the copy is complete (staging.h). A snapshot
  // of a live source never gets one (its open version is what a recovery commits).
  if (!v.ready || v.live_source) return;
  if (v.journaled) {
    if (!journal.record(v.vid, format_meta(meta_of(v))))
      LOG_WARN(
          "v%llu of %s: its description is not in the journal (a recovery after a crash "
          "would use the old one)",
          static_cast<unsigned long long>(v.vid), v.path.c_str());
    return;
  }
  std::string err;
  if (!write_meta(v.meta_path, meta_of(v), &err, MetaWrite::kInPlace))
    LOG_WARN("%s (a recovery after a crash would use the old name)", err.c_str());
}

VersionMeta meta_of(const Version& v) {
  VersionMeta m{v.path, v.rank, v.mode, v.pid};
  m.partial = v.partial;
  m.extents_unknown = v.extents_unknown;
  m.created = v.created;
  m.whole = v.whole_prefix;
  m.opened_ns = v.opened_ns;
  m.closed = v.state != VState::kOpen;
  m.closer = v.closer_pid;
  if (!m.closed) {
    std::map<long, int> pids(v.orphans);
    for (const auto& [conn, h] : v.holders) pids[h.pid] += h.refs;
    m.holders.assign(pids.begin(), pids.end());
  }
  return m;
}

void State::mark_partial(Version& v) {
  if (v.partial) return;
  v.partial = true;
  rewrite_meta(v);
}

void State::absorb_extents(Version& v, const std::string& name) {
  std::string path = dir_ + "/" + name;
  std::string err;
  bool ok = is_extents_file_name(name, v.vid);
  if (!ok) {
    err = "'" + name + "' is not an extents file name of this version";
  } else if (v.partial || v.created) {
    ok = read_extents_file(path, v.extents, &err);
  }
  if (ok && (v.partial || v.created)) {
    v.ext_files.push_back(name);
    return;
  }
  if (ok) {  // not partial (cannot happen with our library): nothing to use it for
    unlink(path.c_str());
    return;
  }
  if (is_extents_file_name(name, v.vid)) unlink(path.c_str());
  LOG_WARN(
      "v%llu of %s: unusable extents (%s); committing the staged file's data extents "
      "instead, which may cover bytes other nodes wrote",
      static_cast<unsigned long long>(v.vid), v.path.c_str(), err.c_str());
  if (!v.extents_unknown) {
    v.extents_unknown = true;
    rewrite_meta(v);
  }
}

bool State::persist_extents(Version& v) {
  std::string name = extents_file_name(v.vid, 0, next_ext_seq++);
  std::string err;
  if (write_extents_file(dir_ + "/" + name, v.extents, &err)) {
    v.ext_files.push_back(name);
    return true;
  }
  LOG_WARN("v%llu of %s: %s (a recovery would not know its extents)",
           static_cast<unsigned long long>(v.vid), v.path.c_str(), err.c_str());
  v.extents_unknown = true;
  rewrite_meta(v);
  return false;
}

void State::absorb_hints(Version& v, const std::string& name) {
  std::string path = dir_ + "/" + name;
  if (!is_hints_file_name(name, v.vid)) {
    LOG_WARN(
        "v%llu of %s: '%s' is not a hints file name of this version (h%llu.<pid>.<seq>); "
        "its dtype hints are ignored",
        static_cast<unsigned long long>(v.vid), v.path.c_str(), name.c_str(),
        static_cast<unsigned long long>(v.vid));
    return;
  }
  std::vector<DtypeHint> records;
  std::string err;
  if (!read_hints_file(path, records, &err, &v.views)) {
    LOG_WARN("v%llu of %s: dtype hints ignored: %s (the data is committed all the same)",
             static_cast<unsigned long long>(v.vid), v.path.c_str(), err.c_str());
    unlink(path.c_str());
    return;
  }
  hints_apply(v.hints, records);
  v.hint_files.push_back(name);
}

void State::persist_hints(Version& v) {
  if (v.hints.empty() && v.views.empty()) return;
  std::string name = hints_file_name(v.vid, 0, next_ext_seq++);
  std::string err;
  if (write_hints_file(dir_ + "/" + name, v.hints, &err, v.views))
    v.hint_files.push_back(name);
  else
    LOG_WARN("v%llu of %s: %s (a recovery would commit it without dtype hints)",
             static_cast<unsigned long long>(v.vid), v.path.c_str(), err.c_str());
}

bool State::busy() const {
  for (const auto& [vid, v] : versions)
    if (v.state == VState::kOpen || v.state == VState::kClosed || v.state == VState::kCommitting)
      return true;
  return false;
}

uint64_t State::staged_bytes() const {
  uint64_t sum = 0;
  for (const auto& [vid, v] : versions) {
    if (v.live_source) continue;  // its open version's bytes: counted there
    if (v.state == VState::kOpen) {
      struct stat st;
      if (stat(v.data_path.c_str(), &st) == 0) sum += static_cast<uint64_t>(st.st_blocks) * 512;
    } else {
      sum += v.size;
    }
  }
  return sum;
}

}  // namespace ckptfwd::fwd
