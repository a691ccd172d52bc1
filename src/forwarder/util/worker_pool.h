// The forwarder's compression workers: threads created once per forwarder (Config.writers
// of them) and reused by every batch, so that each keeps its codec contexts and scratch
// buffers (thread_local in src/codec) warm instead of a thread being started per wave.
//
// Tasks queue in FIFO order, except those a thread submits while it holds an UrgentScope
// (the batch an fsync waits for): they run before every task queued without one, so an
// fsync does not wait for the chunks of a large batch of closed files being compressed
// beside it (batcher.h). What an urgent task submits is urgent too. With a YieldGate, a
// task queued without urgency starts only when the gate lets it (yield_gate.h: not while
// the application writes); urgent ones start at once.
//
// A task that started before the application began to write stops at its next pause
// point (base/pause_point.h: between a chunk's codec steps and zstd pieces, between pieces
// of a file's hash) and waits there while the gate holds: a task without them would run
// on beside the write on the other core, where its memory traffic still slows it. With
// a bulk priority (set_bulk_nice) the tasks queued without urgency run on threads at that
// nice value, so the scheduler gives the application's threads the core at once; urgent
// tasks run on as many threads of their own at the forwarder's priority (a thread may not
// lower its nice value again without privileges, so the two kinds never share a thread).
//
// TaskGroup waits for a set of tasks; OrderedResults hands the results of n jobs to one
// consumer in job order while keeping at most `window` of them produced but not taken:
// the backpressure that bounds the encoded chunks held in memory while the writer is
// slower than the encoders.
#pragma once
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "forwarder/util/yield_gate.h"

namespace ckptfwd::fwd {

class WorkerPool {
 public:
  // What the destructor does with tasks not started yet: run them (the compression
  // workers: a TaskGroup may wait for them) or drop them (the restore threads of read
  // views staged ahead: a forwarder leaving does not restore a whole container first).
  enum class AtExit { kRunQueued, kDropQueued };
  explicit WorkerPool(int threads, AtExit at_exit = AtExit::kRunQueued);
  // Runs or drops what is queued (AtExit), waits for the running tasks, joins the threads.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // The threads a task of one kind may run on (those of one lane with set_bulk_nice).
  int size() const { return lane_threads_; }
  // Holds the tasks queued without urgency while gate says so (yield_gate.h). Set once,
  // before the first task is submitted; gate outlives the pool.
  void set_gate(YieldGate* gate) { gate_ = gate; }
  // Runs the tasks queued without urgency at nice value `nice` (1..19; 0: as the
  // forwarder) and starts as many threads again for the urgent ones. Set once, before the
  // first task is submitted.
  void set_bulk_nice(int nice);
  // While one lives, the tasks this thread submits (directly or through TaskGroup,
  // pool_for, OrderedResults) go ahead of the others.
  class UrgentScope {
   public:
    UrgentScope();
    ~UrgentScope();
    UrgentScope(const UrgentScope&) = delete;
    UrgentScope& operator=(const UrgentScope&) = delete;

   private:
    bool was_;
  };
  // Whether this thread's submissions are urgent now (an UrgentScope lives on it, or it
  // runs an urgent task): for a thread it starts to carry on with the same urgency.
  static bool submitting_urgently();

  // Queues task (FIFO among the urgent ones, see UrgentScope, and among the others). A
  // task must not wait for another task of the pool (the pool may have a single thread);
  // it must not throw (TaskGroup and OrderedResults catch for it).
  void submit(std::function<void()> task);
  // Blocks until nothing is queued and no task runs (tests, shutdown).
  void wait_idle();

 private:
  // urgent_only: a thread of the urgent lane (set_bulk_nice).
  void loop(bool urgent_only);
  // The pause point handler of a task queued without urgency (self: the pool): waits
  // while the gate holds.
  static void pause_bulk(void* self);

  const AtExit at_exit_;
  std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<std::function<void()>> urgent_, queue_;
  size_t running_ = 0;
  bool stop_ = false;
  YieldGate* gate_ = nullptr;
  int bulk_nice_ = 0;  // > 0: the urgent lane exists, and bulk threads run at this nice
  int lane_threads_ = 0;
  std::vector<std::thread> threads_;
};

// Tasks run on a pool; wait() returns when all have run and rethrows the first exception
// one of them threw. The destructor waits too (never leaving a task with dangling
// references to the caller's frame).
class TaskGroup {
 public:
  explicit TaskGroup(WorkerPool& pool) : pool_(pool) {}
  ~TaskGroup();
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;

  void run(std::function<void()> task);
  void wait();

 private:
  WorkerPool& pool_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t running_ = 0;
  std::exception_ptr error_;
};

// work(i) for i in [0, n) on the pool; the calling thread waits (it does not take part,
// so the pool's size is the parallelism). Rethrows the first exception.
void pool_for(WorkerPool& pool, size_t n, const std::function<void(size_t)>& work);

// The results of make(0), ..., make(n-1), computed on the pool and taken in order by one
// consumer with next(). At most `window` jobs are queued, running or done but not taken:
// a job is submitted only when the consumer took an earlier one.
template <class T>
class OrderedResults {
 public:
  OrderedResults(WorkerPool& pool, size_t n, size_t window, std::function<T(size_t)> make)
      : pool_(pool), n_(n), window_(window ? window : 1), make_(std::move(make)) {
    std::lock_guard lk(mu_);
    fill();
  }
  // Waits for the jobs already submitted (their results are dropped).
  ~OrderedResults() {
    std::unique_lock lk(mu_);
    n_ = submitted_;  // submit nothing more
    cv_.wait(lk, [&] { return in_pool_ == 0; });
  }
  OrderedResults(const OrderedResults&) = delete;
  OrderedResults& operator=(const OrderedResults&) = delete;

  // The next result in job order; false when all n were taken. Rethrows the exception its
  // job threw (the jobs after it still run to completion, their results dropped).
  bool next(T& out) {
    std::unique_lock lk(mu_);
    if (taken_ >= n_) return false;
    cv_.wait(lk, [&] { return done_.count(taken_) > 0; });
    auto it = done_.find(taken_);
    Slot slot = std::move(it->second);
    done_.erase(it);
    ++taken_;
    fill();
    if (slot.error) {
      n_ = submitted_;  // the consumer stops here: nothing more is started
      std::rethrow_exception(slot.error);
    }
    out = std::move(*slot.value);
    return true;
  }
  // Jobs submitted and not taken yet (for tests: never more than the window).
  size_t outstanding() {
    std::lock_guard lk(mu_);
    return submitted_ - taken_;
  }

 private:
  struct Slot {
    std::optional<T> value;
    std::exception_ptr error;
  };
  void fill() {  // mu_ held
    while (submitted_ < n_ && submitted_ - taken_ < window_) {
      size_t i = submitted_++;
      ++in_pool_;
      pool_.submit([this, i] {
        Slot slot;
        try {
          slot.value.emplace(make_(i));
        } catch (...) {
          slot.error = std::current_exception();
        }
        std::lock_guard lk(mu_);
        done_.emplace(i, std::move(slot));
        --in_pool_;
        cv_.notify_all();
      });
    }
  }

  WorkerPool& pool_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t n_, window_;
  std::function<T(size_t)> make_;
  size_t submitted_ = 0, taken_ = 0, in_pool_ = 0;
  std::map<size_t, Slot> done_;
};

}  // namespace ckptfwd::fwd
