// A fixed set of worker threads running queued tasks in submission order. Persistent: the
// threads live as long as the pool, so work handed over costs a queue push, not a thread
// start. Tasks must not throw.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ckptfwd::fwd {

class TaskPool {
 public:
  // threads >= 1.
  explicit TaskPool(int threads);
  // Drops the tasks not started yet and waits for the running ones.
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  void submit(std::function<void()> task);
  // Blocks until the queue is empty and no task runs (tests, shutdown).
  void wait_idle();
  size_t threads() const { return threads_.size(); }

 private:
  void run();
  std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<std::function<void()>> queue_;
  size_t running_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ckptfwd::fwd
