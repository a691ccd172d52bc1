#include "forwarder/batcher.h"

#include <algorithm>
#include <map>

#include "forwarder/committer.h"
#include "forwarder/gc.h"
#include "forwarder/log.h"
#include "forwarder/service.h"
#include "forwarder/store_paths.h"

namespace ckptfwd::fwd {

void Batcher::start() {
  {
    std::lock_guard lk(c_.state.mu);
    stop_ = false;
  }
  th_ = std::thread([this] { loop(); });
}

void Batcher::stop() {
  if (!th_.joinable()) return;
  {
    std::lock_guard lk(c_.state.mu);
    stop_ = true;
    c_.state.work_cv.notify_all();
  }
  th_.join();
  std::lock_guard lk(c_.state.mu);
  c_.state.purge_retired(true);
}

void Batcher::loop() {
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  while (!stop_) {
    std::string store;
    std::vector<BatchFile> files;
    Clock::time_point wake;
    if (pick(store, files, &wake)) {
      lk.unlock();
      process(store, files);
      lk.lock();
      continue;
    }
    // Collecting releases the lock: what was closed or notified meanwhile needs a new pick.
    if (collect_due_garbage(c_, lk)) continue;
    if (stop_) break;
    wake = std::min({wake, s.purge_retired(false), Service(c_).reap_orphans()});
    s.work_cv.wait_until(lk, wake);
  }
}

bool Batcher::pick(std::string& store, std::vector<BatchFile>& files, Clock::time_point* wake) {
  State& s = c_.state;
  const Config& cfg = c_.cfg;
  auto now = Clock::now();
  *wake = now + std::chrono::hours(1);
  const auto window = std::chrono::milliseconds(cfg.batch_window_ms);
  const auto max_age = window * 10 + std::chrono::seconds(1);
  std::map<std::string, std::vector<Version*>> groups;
  // Per store: is a file of the same checkpoint wave still being written (opened within
  // the batch window, never fsync'd)? A waiter then gives it until the 100 ms bound to
  // close or fsync too, so one wave of ranks that fsync lands in one container.
  std::map<std::string, bool> wave_open;
  for (auto& [vid, v] : s.versions)
    if (v.state == VState::kOpen && !v.dropped && v.ready && !v.last_snapshot &&
        now - v.opened_at < window)
      wave_open[store_for(cfg, v.path)] = true;
  for (auto& [vid, v] : s.versions) {
    if (v.state == VState::kFailed && !v.dropped) {
      if (v.retry_at <= now) {
        v.state = VState::kClosed;  // time for another attempt
        v.closed_at = now;
      } else {
        *wake = std::min(*wake, v.retry_at);
      }
    }
    if (v.state == VState::kClosed && v.ready && !v.dropped)
      groups[store_for(cfg, v.path)].push_back(&v);
  }
  if (groups.empty()) return false;
  // The store whose oldest version closed first goes first.
  auto by_close = [](const Version* a, const Version* b) { return a->close_seq < b->close_seq; };
  std::vector<std::pair<uint64_t, const std::string*>> order;
  for (auto& [st, vs] : groups) {
    std::sort(vs.begin(), vs.end(), by_close);
    order.push_back({vs.front()->close_seq, &st});
  }
  std::sort(order.begin(), order.end());
  for (auto& [seq, st] : order) {
    std::vector<Version*>& vs = groups[*st];
    uint64_t bytes = 0;
    auto oldest = vs.front()->closed_at;
    for (Version* v : vs) {
      bytes += v->size;
      oldest = std::min(oldest, v->closed_at);
    }
    auto quiet = now - s.last_close;
    bool full = bytes >= cfg.batch_bytes ||
                (cfg.group_size > 0 && vs.size() >= static_cast<size_t>(cfg.group_size));
    bool waited = s.waiters > 0 && ((quiet >= t_.waiter_quiet && !wave_open[*st]) ||
                                    now - oldest >= std::chrono::milliseconds(100));
    bool seal = s.draining || full || waited || quiet >= window || now - oldest >= max_age;
    if (!seal) {
      *wake = std::min({*wake, s.last_close + window, oldest + max_age});
      if (s.waiters > 0)
        *wake = std::min(
            {*wake, s.last_close + t_.waiter_quiet, oldest + std::chrono::milliseconds(100)});
      continue;
    }
    store = *st;
    uint64_t taken_bytes = 0;
    for (Version* v : vs) {
      if (!files.empty() &&
          ((cfg.group_size > 0 && files.size() >= static_cast<size_t>(cfg.group_size)) ||
           taken_bytes + v->size > cfg.batch_bytes))
        break;
      v->state = VState::kCommitting;
      BatchFile bf{v->vid, v->data_path, v->path, v->rank, v->mode, v->mtime_ns, v->size};
      bf.partial = v->partial;
      bf.extents_unknown = v->extents_unknown;
      bf.created = v->created;
      if (v->partial || v->created) bf.extents = v->extents;
      bf.hints = v->hints;
      files.push_back(std::move(bf));
      taken_bytes += v->size;
    }
    return true;
  }
  return false;
}

void Batcher::process(const std::string& store, std::vector<BatchFile> files) {
  State& s = c_.state;
  std::string err;
  for (size_t attempt = 0;; ++attempt) {
    BatchResult res;
    err.clear();
    bool ok = write_container(c_.cfg, store, c_.node, files, res, &err, &c_.inferrer, &c_.codec_choices);
    {
      std::lock_guard lk(s.mu);
      if (ok) ok = commit_batch(c_, store, files, res, &err);
      if (ok) return;
      // A batch of whole files and overlays is two manifest records: if the first went in,
      // its versions are committed (forgotten); only the rest is tried again.
      std::erase_if(files, [&](const BatchFile& f) {
        const Version* v = s.find(f.vid);
        return !v || v->state != VState::kCommitting;
      });
      if (files.empty()) return;
      if (attempt >= t_.retry_delays.size() || stop_) {
        fail_batch(c_, files, t_.failed_retry);
        break;
      }
    }
    LOG_WARN("writing %zu files to store %s failed (attempt %zu): %s; retrying", files.size(),
             store.c_str(), attempt + 1, err.c_str());
    std::this_thread::sleep_for(t_.retry_delays[attempt]);
  }
  LOG_ERROR(
      "cannot commit %zu files to store %s: %s. The staged data is kept and retried; "
      "fsync and exit report EIO until then. Fix: make %s writable with free space "
      "(or set CKPTFWD_STORE)",
      files.size(), store.c_str(), err.c_str(), store.c_str());
}

}  // namespace ckptfwd::fwd
