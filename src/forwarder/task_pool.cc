#include "forwarder/task_pool.h"

namespace ckptfwd::fwd {

TaskPool::TaskPool(int threads) {
  if (threads < 1) threads = 1;
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

TaskPool::~TaskPool() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
    queue_.clear();
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void TaskPool::submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (stop_) return;
    queue_.push_back(std::move(task));
  }
  work_cv_.notify_one();
}

void TaskPool::wait_idle() {
  std::unique_lock<std::mutex> lk(mu_);
  idle_cv_.wait(lk, [this] { return queue_.empty() && running_ == 0; });
}

void TaskPool::run() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    work_cv_.wait(lk, [this] { return stop_ || !queue_.empty(); });
    if (stop_) break;
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lk.unlock();
    task();
    lk.lock();
    --running_;
    if (queue_.empty() && running_ == 0) idle_cv_.notify_all();
  }
  if (running_ == 0) idle_cv_.notify_all();
}

}  // namespace ckptfwd::fwd
