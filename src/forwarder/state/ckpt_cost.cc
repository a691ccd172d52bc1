#include "forwarder/state/ckpt_cost.h"

#include <algorithm>
#include <cstdio>

#include "forwarder/state/stats.h"

namespace ckptfwd::fwd {

void CheckpointCosts::add(uint64_t wave, long pid, int64_t ns) {
  auto w = waves_.find(wave);
  if (w == waves_.end() || ns <= 0) return;
  w->second.blocked[pid] += ns;
}

void CheckpointCosts::blocked(uint64_t vid, long pid, int64_t ns) {
  if (ns <= 0) return;
  if (auto m = members_.find(vid); m != members_.end()) {
    add(m->second.wave, pid, ns);
    publish();
  } else {
    pending_[vid][pid] += ns;
  }
}

void CheckpointCosts::blocked_on_newest(const std::vector<uint64_t>& vids, long pid, int64_t ns) {
  uint64_t newest = 0;
  for (uint64_t vid : vids)
    if (auto m = members_.find(vid); m != members_.end()) newest = std::max(newest, m->second.wave);
  if (!newest || ns <= 0) return;
  add(newest, pid, ns);
  publish();
}

void CheckpointCosts::joined(uint64_t vid, uint64_t wave, Clock::time_point closed,
                             uint64_t bytes) {
  if (!wave || members_.count(vid)) return;
  Wave& w = waves_[wave];
  w.first_close = std::min(w.first_close, closed);
  w.last_close = std::max(w.last_close, closed);
  w.bytes += bytes;
  w.files++;
  w.vids.push_back(vid);
  members_[vid] = Member{wave, bytes, false, false};
  if (auto p = pending_.find(vid); p != pending_.end()) {
    for (const auto& [pid, ns] : p->second) w.blocked[pid] += ns;
    pending_.erase(p);
  }
  while (waves_.size() > kMaxWaves) {  // wave ids grow: the first is the oldest
    for (uint64_t v : waves_.begin()->second.vids) members_.erase(v);
    evicted_close_ = std::max(evicted_close_, waves_.begin()->second.last_close);
    waves_.erase(waves_.begin());
  }
  publish();
}

void CheckpointCosts::committed(uint64_t vid, Clock::time_point at) {
  auto m = members_.find(vid);
  if (m == members_.end() || m->second.committed || m->second.gone) return;
  m->second.committed = true;
  Wave& w = waves_[m->second.wave];
  w.committed++;
  w.last_commit = std::max(w.last_commit, at);
  publish();
}

void CheckpointCosts::forgotten(uint64_t vid, uint64_t into) {
  if (auto m = members_.find(vid); m != members_.end()) {
    if (m->second.committed || m->second.gone) return;
    m->second.gone = true;
    Wave& w = waves_[m->second.wave];
    w.files--;
    w.bytes -= m->second.bytes;
    publish();
    return;
  }
  auto p = pending_.find(vid);
  if (p == pending_.end()) return;
  std::map<long, int64_t> times = std::move(p->second);
  pending_.erase(p);
  if (into && into != vid)
    for (const auto& [pid, ns] : times) blocked(into, pid, ns);
}

void CheckpointCosts::reopened(uint64_t vid) {
  auto m = members_.find(vid);
  if (m == members_.end() || m->second.committed) return;
  Wave& w = waves_[m->second.wave];
  if (!m->second.gone) {
    w.files--;
    w.bytes -= m->second.bytes;
  }
  // Out of the wave's list too: forgetting the old wave must not drop its next membership.
  w.vids.erase(std::remove(w.vids.begin(), w.vids.end(), vid), w.vids.end());
  // The wave was this file alone: its blocked time waits with it for its next wave.
  if (w.files == 0) {
    for (const auto& [pid, ns] : w.blocked) pending_[vid][pid] += ns;
    w.blocked.clear();
  }
  members_.erase(m);
  publish();
}

std::vector<CheckpointCosts::Merged> CheckpointCosts::merged() const {
  // Waves closed at about the same time are one checkpoint: merge them in order of their
  // first close.
  std::vector<std::pair<uint64_t, const Wave*>> order;
  for (const auto& [id, w] : waves_)
    if (w.files > 0) order.emplace_back(id, &w);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second->first_close < b.second->first_close;
  });
  std::vector<Merged> cps;
  for (const auto& [id, w] : order) {
    if (cps.empty() || w->first_close > cps.back().end + merge_) {
      cps.emplace_back();
      cps.back().first_close = w->first_close;
      cps.back().id = id;
    }
    Merged& c = cps.back();
    for (const auto& [pid, ns] : w->blocked) c.blocked[pid] += ns;
    c.end = std::max(c.end, w->last_close);
    c.last_close = std::max(c.last_close, w->last_close);
    c.last_commit = std::max(c.last_commit, w->last_commit);
    c.bytes += w->bytes;
    c.files += w->files;
    c.waves++;
    c.complete = c.complete && w->complete();
  }
  return cps;
}

std::vector<CheckpointCosts::Record> CheckpointCosts::take_records() {
  std::vector<Record> out;
  for (const Merged& c : merged()) {
    // A checkpoint that lost its first waves to the limit would come out again under its
    // next wave's id with part of its bytes: its records are out already.
    if (!c.complete || c.first_close <= evicted_close_ + merge_) continue;
    Record r;
    r.id = c.id;
    r.first_close = c.first_close;
    r.last_close = c.last_close;
    r.last_commit = c.last_commit;
    for (const auto& [pid, ns] : c.blocked) r.blocked_ns = std::max(r.blocked_ns, ns);
    r.processes = c.blocked.size();
    r.bytes = c.bytes;
    r.files = c.files;
    r.waves = c.waves;
    auto [it, fresh] = handed_.try_emplace(c.id, r);
    if (!fresh && it->second == r) continue;
    it->second = r;
    out.push_back(r);
  }
  while (handed_.size() > kMaxWaves) handed_.erase(handed_.begin());
  return out;
}

std::string CheckpointCosts::checkpoint_json(const Record& r, const char* node, const char* job,
                                             long pid, int64_t now_wall_ns, Clock::time_point now) {
  auto wall = [&](Clock::time_point t) {
    return now_wall_ns - std::chrono::duration_cast<std::chrono::nanoseconds>(now - t).count();
  };
  const int64_t durable = std::max<int64_t>(
      0,
      std::chrono::duration_cast<std::chrono::nanoseconds>(r.last_commit - r.last_close).count());
  char buf[768];
  snprintf(buf, sizeof buf,
           "{\"source\":\"checkpoint\",\"node\":\"%s\",\"job\":\"%s\",\"pid\":%ld,\"id\":%llu,"
           "\"first_close_ns\":%lld,\"last_close_ns\":%lld,\"durable_ns\":%lld,"
           "\"blocked_ns\":%lld,\"processes\":%zu,\"bytes\":%llu,\"files\":%zu,"
           "\"waves\":%zu}",
           node, job, pid, static_cast<unsigned long long>(r.id),
           static_cast<long long>(wall(r.first_close)), static_cast<long long>(wall(r.last_close)),
           static_cast<long long>(durable), static_cast<long long>(r.blocked_ns), r.processes,
           static_cast<unsigned long long>(r.bytes), r.files, r.waves);
  return buf;
}

CheckpointCosts::Summary CheckpointCosts::summary() const {
  std::vector<Merged> cps = merged();
  Summary s;
  int64_t blocked = 0, durable = 0;
  uint64_t bytes = 0;
  for (auto it = cps.rbegin(); it != cps.rend() && s.checkpoints < kWindow; ++it) {
    if (!it->complete || it->blocked.empty()) continue;  // not measured (or not done)
    int64_t slowest = 0;
    for (const auto& [pid, ns] : it->blocked) slowest = std::max(slowest, ns);
    blocked += slowest;
    durable += std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::nanoseconds>(it->last_commit - it->last_close)
               .count());
    bytes += it->bytes;
    s.checkpoints++;
  }
  if (s.checkpoints) {
    s.blocked_ns = blocked / static_cast<int64_t>(s.checkpoints);
    s.durable_ns = durable / static_cast<int64_t>(s.checkpoints);
    s.bytes = bytes / s.checkpoints;
  }
  return s;
}

void CheckpointCosts::publish() {
  if (!stats_) return;
  Summary s = summary();
  stats_->checkpoints_measured = s.checkpoints;
  stats_->ckpt_blocked_ns = static_cast<uint64_t>(s.blocked_ns);
  stats_->ckpt_durable_ns = static_cast<uint64_t>(s.durable_ns);
  stats_->ckpt_bytes = s.bytes;
}

}  // namespace ckptfwd::fwd
