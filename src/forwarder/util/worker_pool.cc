#include "forwarder/util/worker_pool.h"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "base/monotonic.h"
#include "base/pause_point.h"

namespace ckptfwd::fwd {

namespace {
thread_local bool submit_urgent = false;  // an UrgentScope lives on this thread
}  // namespace

WorkerPool::UrgentScope::UrgentScope() : was_(submit_urgent) { submit_urgent = true; }
WorkerPool::UrgentScope::~UrgentScope() { submit_urgent = was_; }
bool WorkerPool::submitting_urgently() { return submit_urgent; }

WorkerPool::WorkerPool(int threads, AtExit at_exit) : at_exit_(at_exit) {
  lane_threads_ = std::max(1, threads);
  for (int t = 0; t < lane_threads_; ++t) threads_.emplace_back([this] { loop(false); });
}

void WorkerPool::set_bulk_nice(int nice) {
  if (nice <= 0) return;
  {
    std::lock_guard lk(mu_);
    bulk_nice_ = std::min(nice, 19);
  }
  for (int t = 0; t < lane_threads_; ++t) threads_.emplace_back([this] { loop(true); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
    if (at_exit_ == AtExit::kDropQueued) {
      urgent_.clear();
      queue_.clear();
    }
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::submit(std::function<void()> task) {
  bool lane;
  {
    std::lock_guard lk(mu_);
    if (stop_ && at_exit_ == AtExit::kDropQueued) return;
    (submit_urgent ? urgent_ : queue_).push_back(std::move(task));
    lane = bulk_nice_ > 0;
  }
  // With an urgent lane, one woken thread may be of the other lane: wake them all.
  if (lane)
    cv_.notify_all();
  else
    cv_.notify_one();
}

void WorkerPool::wait_idle() {
  std::unique_lock lk(mu_);
  idle_cv_.wait(lk, [&] { return urgent_.empty() && queue_.empty() && running_ == 0; });
}

void WorkerPool::loop(bool urgent_only) {
  int niced = 0;
  std::unique_lock lk(mu_);
  for (;;) {
    // With an urgent lane, a bulk thread takes no urgent task (it may run below the
    // forwarder's priority), and the lane's threads take nothing else.
    const bool lane = bulk_nice_ > 0;
    auto takes_urgent = [&] { return urgent_only || !lane; };
    auto has_work = [&] {
      return (takes_urgent() && !urgent_.empty()) || (!urgent_only && !queue_.empty());
    };
    cv_.wait(lk, [&] { return stop_ || has_work(); });
    // Stopping, and everything queued for this thread has run (or was dropped)?
    if (!has_work()) {
      if (stop_) break;
      continue;
    }
    const bool urgent = takes_urgent() && !urgent_.empty();
    if (!urgent && niced < bulk_nice_) {  // (a bulk thread's nice value only ever rises)
      setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), bulk_nice_);
      niced = bulk_nice_;
    }
    if (!urgent && gate_ && !stop_) {
      const int64_t t0 = monotonic_ns();
      const int64_t hold = gate_->hold_ns(t0);
      if (hold > 0) {
        // Looks again when the hold ends, at an urgent task or a stop (a notify), and at
        // least every 5 ms (the stretch may end early: an exit wait began).
        cv_.wait_for(lk, std::chrono::nanoseconds(std::min<int64_t>(hold, 5'000'000)));
        gate_->add_held(monotonic_ns() - t0);
        continue;
      }
    }
    std::deque<std::function<void()>>& from = urgent ? urgent_ : queue_;
    std::function<void()> task = std::move(from.front());
    from.pop_front();
    ++running_;
    lk.unlock();
    submit_urgent = urgent;  // what an urgent task submits is urgent too
    {
      PauseScope pauses(!urgent && gate_ ? &WorkerPool::pause_bulk : nullptr, this);
      task();
    }
    submit_urgent = false;
    lk.lock();
    if (--running_ == 0 && urgent_.empty() && queue_.empty()) idle_cv_.notify_all();
  }
}

void WorkerPool::pause_bulk(void* self) {
  YieldGate* gate = static_cast<WorkerPool*>(self)->gate_;
  const int64_t t0 = monotonic_ns();
  int64_t now = t0;
  // Looks again at least every 5 ms, as a held thread in loop() does (an exit wait or a
  // drain may end the hold early).
  for (int64_t hold; (hold = gate->hold_ns(now)) > 0; now = monotonic_ns()) {
    const timespec nap{0, static_cast<long>(std::min<int64_t>(hold, 5'000'000))};
    nanosleep(&nap, nullptr);
  }
  if (now > t0) gate->add_held(now - t0);
}

TaskGroup::~TaskGroup() {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return running_ == 0; });
}

void TaskGroup::run(std::function<void()> task) {
  {
    std::lock_guard lk(mu_);
    ++running_;
  }
  pool_.submit([this, task = std::move(task)] {
    std::exception_ptr e;
    try {
      task();
    } catch (...) {
      e = std::current_exception();
    }
    std::lock_guard lk(mu_);
    if (e && !error_) error_ = e;
    if (--running_ == 0) cv_.notify_all();
  });
}

void TaskGroup::wait() {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return running_ == 0; });
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

void pool_for(WorkerPool& pool, size_t n, const std::function<void(size_t)>& work) {
  TaskGroup g(pool);
  for (size_t i = 0; i < n; ++i) g.run([&work, i] { work(i); });
  g.wait();
}

}  // namespace ckptfwd::fwd
