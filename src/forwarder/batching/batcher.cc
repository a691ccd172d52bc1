#include "forwarder/batching/batcher.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "base/monotonic.h"
#include "forwarder/commit/committer.h"
#include "forwarder/commit/gc.h"
#include "forwarder/pipeline/chunk_index.h"
#include "forwarder/staging/warm_memory.h"
#include "forwarder/util/log.h"
#include "forwarder/util/notices.h"
#include "forwarder/util/store_paths.h"
#include "forwarder/util/test_hooks.h"

namespace ckptfwd::fwd {

void Batcher::start() {
  {
    std::lock_guard lk(c_.state.mu);
    stop_ = false;
  }
  for (Lane& lane : lanes_) lane.th = std::thread([this, &lane] { lane_loop(lane); });
  th_ = std::thread([this] { loop(); });
}

void Batcher::stop() {
  if (!th_.joinable()) return;
  {
    std::lock_guard lk(c_.state.mu);
    stop_ = true;
    c_.state.work_cv.notify_all();
    lane_cv_.notify_all();
  }
  th_.join();
  for (Lane& lane : lanes_) lane.th.join();  // after the batch each may have in flight
  std::lock_guard lk(c_.state.mu);
  c_.state.purge_retired(true);
  for (const std::string& path : doomed_) ::unlink(path.c_str());
  doomed_.clear();
}

void Batcher::loop() {
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  while (!stop_) {
    const Clock::time_point look_start = Clock::now();
    // Versions closed maybe unchanged since their fsync: settled before any batch.
    if (s.unchanged_checks > 0) {
      chores_.settle_unchanged(lk);
      continue;
    }
    std::string store;
    std::vector<BatchFile> files;
    Clock::time_point wake = Clock::now() + std::chrono::hours(1);
    const bool bulk_free = !lanes_[kBulkLane].busy, sync_free = !lanes_[kSyncLane].busy;
    bool synced = false;
    // A lane that finishes notifies work_cv: with both busy, nothing is picked until then,
    // and with the bulk lane busy only while an fsync waits (a pick looks at every staged
    // version: not at every close of a process writing thousands of small files).
    const bool worth_a_pick = bulk_free || (sync_free && s.sync_waiting > 0);
    if (worth_a_pick && pick(store, files, &wake, bulk_free, &synced)) {
      Lane& lane = lanes_[synced && sync_free ? kSyncLane : kBulkLane];
      if (synced && !bulk_free) c_.stats.fsync_batches_beside++;
      lane.store = std::move(store);
      lane.files = std::move(files);
      lane.busy = true;
      lane_cv_.notify_all();
      continue;
    }
    // Not beside a batch in flight, which may refer to chunks of what it deletes.
    // Collecting releases the lock: what was closed or notified meanwhile needs a new pick.
    if (!lanes_busy() && collect_due_garbage(c_.commit_context(), lk)) continue;
    if (stop_) break;
    Clock::time_point purge_at = s.purge_retired(false, &doomed_);
    if (!doomed_.empty()) {
      if (const int64_t hold = c_.gate.hold_ns(monotonic_ns()); hold > 0) {
        purge_at = std::min(purge_at, Clock::now() + std::chrono::nanoseconds(hold));
      } else {
        std::vector<std::string> doomed;
        doomed.swap(doomed_);
        lk.unlock();  // unlinking a large staged file frees its pages: not under the lock
        for (const std::string& path : doomed) ::unlink(path.c_str());
        lk.lock();
        continue;  // what was closed or notified meanwhile needs a new pick
      }
    }
    bool reaped = false;
    const Clock::time_point reap_at = chores_.reap_orphans(&reaped);
    if (reaped) continue;  // closed versions to pick
    wake = std::min({wake, purge_at, reap_at});
    // A close makes a batch due a batch window after it at the soonest (unless someone
    // waits: then it notifies), so a close within the last window is looked at again by
    // then, and closes need not wake this thread one by one (State::mark_closed).
    const auto window = std::chrono::milliseconds(c_.cfg.batch_window_ms);
    if (s.last_close + window > look_start) wake = std::min(wake, s.last_close + window);
    // Closes notify (when they may make a batch due: State::close_wakes_batcher), and a
    // pick looks at every staged version under the state lock: a process writing
    // thousands of small files would make that quadratic, and stall its own verbs.
    // Between two looks that found nothing to do, at least kPickGap passes, and
    // kIdleLookRatio times as long as the look took (so the batcher holds the lock a
    // bounded share of the time however many versions are staged), unless a waiter
    // (fsync, exit, drain) or a stop needs the batcher now.
    const Clock::time_point looked = Clock::now();
    const Clock::time_point not_before =
        looked + std::max<Clock::duration>(kPickGap, (looked - look_start) * kIdleLookRatio);
    s.batcher_sleeps_until = wake;
    s.work_cv.wait_until(lk, wake);
    s.batcher_sleeps_until = not_before;  // a close does not end this wait: no need to notify
    while (!stop_ && s.waiters == 0 && !s.draining && Clock::now() < not_before)
      s.work_cv.wait_until(lk, not_before);
    s.batcher_sleeps_until = Clock::time_point::min();
  }
}

void Batcher::lane_loop(Lane& lane) {
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  for (;;) {
    lane_cv_.wait(lk, [&] { return lane.busy || stop_; });
    if (!lane.busy) return;  // stopping, with nothing assigned
    std::string store = std::move(lane.store);
    std::vector<BatchFile> files = std::move(lane.files);
    lk.unlock();
    process(store, std::move(files), &lane == &lanes_[kSyncLane]);
    lk.lock();
    lane.busy = false;
    s.work_cv.notify_all();  // the batcher may hand this lane the next batch
  }
}

bool Batcher::pick(std::string& store, std::vector<BatchFile>& files, Clock::time_point* wake,
                   bool bulk_allowed, bool* synced) {
  State& s = c_.state;
  auto now = Clock::now();
  *wake = now + std::chrono::hours(1);
  s.closed_bytes_unpicked = 0;  // what closed so far is looked at now
  std::map<std::string, std::vector<Version*>> groups;
  std::map<std::string, bool> wave_open;
  group_closed_versions(now, groups, wave_open, wake);
  std::vector<std::pair<uint64_t, const std::string*>> order = join_waves(groups);
  if (groups.empty()) return false;
  std::set<std::string> gathering;
  if (pick_synced(groups, order, store, files, wake, &gathering)) {
    *synced = true;
    return true;
  }
  if (!bulk_allowed) return false;
  for (auto& [seq, st] : order) {
    if (gathering.count(*st)) continue;
    if (pick_store(groups[*st], wave_open[*st], now, files, wake)) {
      store = *st;
      return true;
    }
  }
  return false;
}

void Batcher::group_closed_versions(Clock::time_point now,
                                    std::map<std::string, std::vector<Version*>>& groups,
                                    std::map<std::string, bool>& wave_open,
                                    Clock::time_point* wake) {
  State& s = c_.state;
  const auto window = std::chrono::milliseconds(c_.cfg.batch_window_ms);
  // Paths with a version in a batch in flight: a newer version waits for its commit.
  std::set<std::string> committing;
  for (auto& [vid, v] : s.versions) {
    if (v.dropped) continue;
    if (v.state == VState::kCommitting) committing.insert(v.path);
    if (v.state == VState::kOpen && v.ready && !v.last_snapshot && now - v.opened_at < window)
      wave_open[store_for(c_.cfg, v.path)] = true;
  }
  for (auto& [vid, v] : s.versions) {
    if (v.state == VState::kFailed && !v.dropped) {
      if (v.retry_at <= now) {
        v.state = VState::kClosed;  // time for another attempt
        v.closed_at = now;
      } else {
        *wake = std::min(*wake, v.retry_at);
      }
    }
    if (v.state == VState::kClosed && v.ready && !v.dropped && !committing.count(v.path))
      groups[store_for(c_.cfg, v.path)].push_back(&v);
  }
}

std::vector<std::pair<uint64_t, const std::string*>> Batcher::join_waves(
    std::map<std::string, std::vector<Version*>>& groups) {
  State& s = c_.state;
  auto by_close = [](const Version* a, const Version* b) { return a->close_seq < b->close_seq; };
  std::vector<std::pair<uint64_t, const std::string*>> order;
  std::vector<std::pair<Version*, const std::string*>> fresh;
  std::set<uint64_t> live;
  for (auto& [st, vs] : groups) {
    std::sort(vs.begin(), vs.end(), by_close);
    order.push_back({vs.front()->close_seq, &st});
    for (Version* v : vs) {
      if (!v->wave) fresh.push_back({v, &st});
      live.insert(v->wave);
    }
  }
  // Newly closed versions join their checkpoint waves, in close order.
  std::sort(fresh.begin(), fresh.end(),
            [](auto& a, auto& b) { return a.first->close_seq < b.first->close_seq; });
  for (auto& [v, st] : fresh) {
    live.insert(v->wave = waves_.add(*st, v->path, v->rank, v->closed_at));
    s.costs.joined(v->vid, v->wave, v->closed_at, v->size);
  }
  waves_.retain_open(live);
  // The store whose oldest version closed first goes first.
  std::sort(order.begin(), order.end());
  return order;
}

bool Batcher::pick_store(const std::vector<Version*>& vs, bool wave_open, Clock::time_point now,
                         std::vector<BatchFile>& files, Clock::time_point* wake) {
  State& s = c_.state;
  uint64_t bytes = 0;
  auto oldest = vs.front()->closed_at;
  std::vector<WavePart> parts;  // in the order of their first close
  std::map<uint64_t, size_t> part_of;
  for (Version* v : vs) {
    bytes += v->size;
    oldest = std::min(oldest, v->closed_at);
    auto [it, added] = part_of.try_emplace(v->wave, parts.size());
    if (added) parts.push_back(WavePart{v->wave, {}, 0, false});
    parts[it->second].vs.push_back(v);
    parts[it->second].bytes += v->size;
  }
  auto quiet = now - s.last_close;
  bool full = bytes >= c_.cfg.batch_bytes;
  bool waited = s.waiters > 0 && ((quiet >= t_.waiter_quiet && !wave_open) ||
                                  now - oldest >= std::chrono::milliseconds(100));
  bool everything = s.draining || full || waited;
  bool any_due = mark_due_waves(parts, now, wake);
  if (!everything && !any_due) {
    if (s.waiters > 0)
      *wake = std::min(
          {*wake, s.last_close + t_.waiter_quiet, oldest + std::chrono::milliseconds(100)});
    return false;
  }
  take_wave_parts(parts, everything, files);
  return true;
}

bool Batcher::mark_due_waves(std::vector<WavePart>& parts, Clock::time_point now,
                             Clock::time_point* wake) {
  State& s = c_.state;
  const auto window = std::chrono::milliseconds(c_.cfg.batch_window_ms);
  // A wave waits for a new member at least as long as a batch waits for quiet, so a long
  // batch window (tests that keep versions staged) holds waves too.
  const auto wave_window = std::max(window, std::chrono::milliseconds(c_.cfg.wave_window_ms));
  const auto max_age = std::max(window * 10 + std::chrono::seconds(1), wave_window * 4);
  bool any_due = false;
  for (WavePart& p : parts) {
    const Waves::Wave* w = waves_.find(p.wave);
    if (!w || w->sealed) {  // the rest of a wave a batch took before (or a retry)
      p.due = any_due = true;
      continue;
    }
    auto first = p.vs.front()->closed_at;
    for (Version* v : p.vs) first = std::min(first, v->closed_at);
    size_t expected = waves_.expected(*w);
    bool complete = expected > 0 && w->paths.size() >= expected && !wave_member_open(*w);
    p.due = (complete && now - s.last_close >= window) || now - w->last_close >= wave_window ||
            now - first >= max_age;
    any_due = any_due || p.due;
    if (!p.due) {
      *wake = std::min({*wake, w->last_close + wave_window, first + max_age});
      if (complete) *wake = std::min(*wake, s.last_close + window);
    }
  }
  return any_due;
}

bool Batcher::wave_member_open(const Waves::Wave& w) {
  for (auto& [vid, v] : c_.state.versions)
    if (v.state == VState::kOpen && !v.dropped && waves_.accepts(w.id, w.store, v.path, v.rank) &&
        store_for(c_.cfg, v.path) == w.store)
      return true;
  return false;
}

void Batcher::take_wave_parts(const std::vector<WavePart>& parts, bool everything,
                              std::vector<BatchFile>& files) {
  uint64_t taken_bytes = 0;
  for (const WavePart& p : parts) {
    if (!everything && !p.due) continue;
    // Whole waves while they fit in batch_bytes: only a wave bigger than that is cut.
    if (!files.empty() && taken_bytes + p.bytes > c_.cfg.batch_bytes) break;
    size_t n = 0;
    for (Version* v : p.vs) {
      if (!files.empty() && taken_bytes + v->size > c_.cfg.batch_bytes) break;
      files.push_back(take(*v));
      taken_bytes += v->size;
      ++n;
    }
    seal_wave(p.wave, n == p.vs.size());
    if (n < p.vs.size()) break;
  }
}

void Batcher::seal_wave(uint64_t wave, bool whole) {
  State& s = c_.state;
  Waves::SealResult r = waves_.seal(wave, whole);
  if (r.first) s.stats().waves_sealed++;
  if (r.split) s.stats().waves_split++;
}

BatchFile Batcher::take(Version& v) {
  v.state = VState::kCommitting;
  BatchFile bf;
  bf.vid = v.vid;
  bf.data_path = v.data_path;
  bf.path = v.path;
  bf.rank = v.rank;
  bf.mode = v.mode;
  bf.mtime_ns = v.mtime_ns;
  bf.size = v.size;
  bf.partial = v.partial;
  bf.extents_unknown = v.extents_unknown;
  bf.created = v.created;
  if (v.partial || v.created) bf.extents = v.extents;
  bf.hints = v.hints;
  bf.views = v.views;
  bf.live = v.live_source;
  bf.in_place = v.in_place;
  if (v.live_source) {  // read in place (in_place.h), or maybe so (write_container)
    // Who may write the file: its writers at the fsync, and any that joined since.
    bf.holder_pids = v.writer_pids;
    if (const Version* open = c_.state.find(v.snapshot_of)) {
      for (const auto& [client, hold] : open->holders) bf.holder_pids.push_back(hold.pid);
      for (const auto& [pid, refs] : open->orphans) bf.holder_pids.push_back(pid);
    }
    std::sort(bf.holder_pids.begin(), bf.holder_pids.end());
    bf.holder_pids.erase(std::unique(bf.holder_pids.begin(), bf.holder_pids.end()),
                         bf.holder_pids.end());
  }
  return bf;
}

bool Batcher::pick_synced(std::map<std::string, std::vector<Version*>>& groups,
                          const std::vector<std::pair<uint64_t, const std::string*>>& order,
                          std::string& store, std::vector<BatchFile>& files,
                          Clock::time_point* wake, std::set<std::string>* gathering) {
  const auto now = Clock::now();
  for (auto& [seq, st] : order) {
    std::vector<Version*>& vs = groups[*st];
    // The first fsync'd version ready: the gather for snapshots being made starts there
    // and lasts kSyncGather, or as long as that version's own snapshot took to make (the
    // other ranks' copies of the same size run beside it and end about as late).
    const Version* first = nullptr;
    for (Version* v : vs)
      if (v->sync_waiters > 0 && (!first || v->closed_at < first->closed_at)) first = v;
    if (!first) continue;
    const Clock::duration made =
        first->snapshot_of ? first->closed_at - first->snapshot_started : Clock::duration::zero();
    const Clock::time_point gather_end =
        first->closed_at + std::max<Clock::duration>(kSyncGather, made);
    if (now < gather_end && sync_peers_pending(*first, *st)) {
      // Its mark_closed (or a close) wakes the batcher.
      *wake = std::min(*wake, gather_end);
      gathering->insert(*st);
      continue;
    }
    take_synced(vs, files);
    if (files.empty()) continue;
    store = *st;
    return true;
  }
  return false;
}

bool Batcher::sync_peers_pending(const Version& first, const std::string& store) {
  // A file of the same checkpoint wave still being written and not fsync'd yet (another
  // rank's, a few ms behind): its fsync or close wakes the batcher, and the ranks of one
  // wave share one container instead of queueing one after another.
  for (auto& [vid, v] : c_.state.versions) {
    if (v.dropped || store_for(c_.cfg, v.path) != store) continue;
    const bool peer_writing = v.state == VState::kOpen && v.ready && !v.last_snapshot &&
                              first.wave && waves_.accepts(first.wave, store, v.path, v.rank);
    if ((v.snapshot_of && !v.ready) || peer_writing) return true;
  }
  // And a rank of the wave that has not even opened its file yet: the wave's family
  // had more files last time than the wave has now (closed or open, counted above).
  const Waves::Wave* w = first.wave ? waves_.find(first.wave) : nullptr;
  return w && w->paths.size() < waves_.expected(*w);
}

void Batcher::take_synced(const std::vector<Version*>& vs, std::vector<BatchFile>& files) {
  // Only the fsync'd versions (and older ones of their paths): any other file in the
  // batch would make them wait for its compression. Their waves' other members follow
  // in later batches.
  std::map<uint64_t, std::pair<size_t, size_t>> taken_of_wave;  // wave: taken, closed
  for (Version* v : vs) taken_of_wave[v->wave].second++;
  // An older closed version of an fsync'd path goes with it (the commit names the
  // newest of a batch): committed after it, it would replace the fsync'd bytes.
  std::map<std::string, uint64_t> synced_order;  // path: newest fsync'd version's order
  for (Version* v : vs)
    if (v->sync_waiters > 0) synced_order[v->path] = std::max(synced_order[v->path], v->order);
  // CKPTFWD_BATCH_BYTES cuts between checkpoint waves, not within one: the ranks of a
  // wave whose fsyncs land in one batch return together. Cut in two, the ranks of the
  // first half returned first and then polled in their MPI waits on the cores the
  // second half was being compressed on (4 ranks fsyncing 512 MiB each on 2 cores:
  // 3.9-4.3 s against 1.8 s in one batch).
  uint64_t batch_wave = 0;  // of the versions taken, while they are of one wave
  uint64_t bytes = 0;
  for (Version* v : vs) {
    auto it = synced_order.find(v->path);
    if (it == synced_order.end() || v->order > it->second) continue;
    if (files.empty()) batch_wave = v->wave;
    if (v->wave != batch_wave) batch_wave = 0;
    if (!files.empty() && bytes + v->size > c_.cfg.batch_bytes && batch_wave == 0) break;
    files.push_back(take(*v));
    files.back().synced = true;
    bytes += v->size;
    taken_of_wave[v->wave].first++;
  }
  for (auto& [wave, n] : taken_of_wave) {
    if (n.first) seal_wave(wave, n.first == n.second);
  }
}

void Batcher::process(const std::string& store, std::vector<BatchFile> files, bool on_sync_lane) {
  State& s = c_.state;
  // An fsync waits for this batch: its tasks go ahead of a bulk batch's on the workers.
  std::optional<WorkerPool::UrgentScope> urgent;
  if (!files.empty() && files.front().synced) urgent.emplace();
  std::string err;
  for (size_t attempt = 0;; ++attempt) {
    BatchResult res;
    err.clear();
    // Chunks unchanged since an earlier container of the store become references to it.
    std::shared_ptr<const ChunkIndex> refs =
        chunk_index_for(c_.chunk_indexes, c_.state, store, files);
    const ContainerJob job{.cfg = c_.cfg,
                           .store = store,
                           .node = c_.node,
                           .inferrer = &c_.inferrer,
                           .choices = &c_.codec_choices,
                           .refs = refs.get(),
                           .workers = &c_.workers};
    bool ok = write_container(job, files, res, &err);
    if (ok && test_hooks().after_batch_written) test_hooks().after_batch_written(files);
    {
      std::unique_lock lk(s.mu);
      if (ok) ok = commit_batch(c_.commit_context(), lk, store, files, res, &err);
      if (ok) {
        c_.chunk_indexes.committed(store, {res.container, res.identity});
        c_.stats.fsync_in_place += res.in_place;
        c_.stats.fsync_copies += res.in_place_copied;
      }
      if (!ok) {
        // A batch of whole files and overlays is two manifest records: if the first went in,
        // its versions are committed (forgotten); only the rest is tried again.
        std::erase_if(files, [&](const BatchFile& f) {
          const Version* v = s.find(f.vid);
          return !v || v->state != VState::kCommitting;
        });
        if (files.empty()) return;
        if (attempt >= t_.retry_delays.size() || stop_) {
          fail_batch(c_.commit_context(), files, t_.failed_retry);
          break;
        }
      }
    }
    if (ok) {
      // Codec trials batches did not wait for (an fsync's, or beyond a batch's trial budget:
      // pipeline.cc), now that this one is committed: the next checkpoint of those
      // variables gets their tuned chains, and so does the next job (the store's CHAINS
      // file). The sync lane takes only a few, so that the next fsync does not wait.
      std::string why;
      const uint64_t trial_bytes = on_sync_lane ? kSyncLaneTrialBytes : UINT64_MAX;
      if (c_.codec_choices.run_deferred(trial_bytes) && !c_.codec_choices.remember(store, &why))
        LOG_WARN("codec chains not remembered for the next job: %s", why.c_str());
      // Likewise warm memory for the snapshots that were read in place for want of it.
      warm::prepare(std::move(res.warm_sizes));
      return;
    }
    LOG_WARN("writing %zu files to store %s failed (attempt %zu): %s; retrying", files.size(),
             store.c_str(), attempt + 1, err.c_str());
    // Said at the first failure: a process's exit wait may give up before the retries do.
    notices().post("store " + store,
                   "cannot commit to store " + store + ": " + err +
                       ". The files stay staged on this node and are retried; fsync and exit "
                       "report EIO while it fails. Fix: make " +
                       store + " writable with free space (or set CKPTFWD_STORE)" + log_pointer());
    std::this_thread::sleep_for(t_.retry_delays[attempt]);
  }
  LOG_ERROR(
      "cannot commit %zu files to store %s: %s. The staged data is kept and retried; "
      "fsync and exit report EIO until then. Fix: make %s writable with free space "
      "(or set CKPTFWD_STORE)",
      files.size(), store.c_str(), err.c_str(), store.c_str());
}

}  // namespace ckptfwd::fwd
