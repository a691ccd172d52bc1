// The application's writes go first: while a process of the node writes a captured file,
// the forwarder's bulk work (hashing, codec trials and encoding of closed files: the tasks
// of the worker pool that no fsync waits for) is not started, so on a node with few cores
// it does not take the cores the application writes with (docs/internals.md, "The application's
// writes go first").
//
// "Writing" is read from the session's activity word (wire/activity.h), which the library
// stores after captured writes, flushes, fsyncs and closes, and from note_write, which the
// forwarder calls at every write OPEN (the first write of a file is then known before it
// happens, and an mmap writer, which makes no call, is known from its open). Bulk work
// waits while the latest of them is less than kQuietNs old, out of a budget of max_hold:
// held time spends it, time not held refills it at the same rate, up to max_hold. A
// checkpoint written in less than max_hold is never shared with compression; a process
// that writes for minutes, or every few tens of ms all job long, gets at least half of
// the time for compression beside it. Work something waits for is never held: a task
// submitted under WorkerPool::UrgentScope (an fsync's batch), and everything while
// demand() says so (an exit wait, a drain, shutdown).
//
// Thread-safe. Without attach, only note_write counts.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "wire/activity.h"

namespace ckptfwd::fwd {

class YieldGate {
 public:
  // A write this recent holds bulk work back.
  static constexpr int64_t kQuietNs = 25'000'000;

  // max_hold_ms: CKPTFWD_YIELD_MS, the budget (0: never hold). held: where add_held counts (the
  // stats' time_yield_s), or null.
  YieldGate(int max_hold_ms, std::atomic<uint64_t>* held)
      : max_hold_ns_(int64_t{max_hold_ms} * 1'000'000), held_(held), budget_ns_(max_hold_ns_) {}
  ~YieldGate();
  YieldGate(const YieldGate&) = delete;
  YieldGate& operator=(const YieldGate&) = delete;

  // Opens or makes <session_dir>/activity (a regular file of ours, kBytes, the magic) and
  // maps it. False with *err when it cannot: the gate then sees only note_write.
  bool attach(const std::string& session_dir, std::string* err);
  // The mapped activity page (wire/activity.h), or null when attach failed.
  void* page() const { return clock_ ? map_ : nullptr; }
  // Something waits for the forwarder's work now (an exit wait, a drain): nothing is held.
  void set_demand(std::function<bool()> demand) { demand_ = std::move(demand); }

  // A process of the node is about to write (a write OPEN) at now_ns (CLOCK_MONOTONIC).
  void note_write(int64_t now_ns);
  // How long bulk work should wait from now_ns before it looks again; 0: go.
  int64_t hold_ns(int64_t now_ns);
  // Time a thread spent held (the pool adds it).
  void add_held(int64_t ns) {
    if (held_ && ns > 0) held_->fetch_add(static_cast<uint64_t>(ns), std::memory_order_relaxed);
  }

 private:
  int64_t latest_write(int64_t now_ns) const;

  const int64_t max_hold_ns_;
  activity::Clock* clock_ = nullptr;
  void* map_ = nullptr;
  std::function<bool()> demand_;
  std::atomic<int64_t> opened_ns_{0};
  std::atomic<uint64_t>* const held_;
  std::mutex mu_;
  int64_t budget_ns_;     // hold time left (max_hold_ns_ at most)
  int64_t last_ns_ = 0;   // the time of the last hold_ns
  bool holding_ = false;  // what it answered
};

}  // namespace ckptfwd::fwd
