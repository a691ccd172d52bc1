#include "forwarder/util/after_jobs.h"

#include <optional>
#include <system_error>

#include "forwarder/util/worker_pool.h"

namespace ckptfwd::fwd {

AfterJobs::AfterJobs(size_t jobs, std::function<void()> work)
    : work_(std::move(work)), urgent_(WorkerPool::submitting_urgently()), left_(jobs) {
  std::lock_guard lk(mu_);
  if (left_ == 0) start_locked();
}

AfterJobs::~AfterJobs() {
  {
    std::lock_guard lk(mu_);
    started_ = true;  // nothing starts it now
  }
  if (thread_.joinable()) thread_.join();
}

void AfterJobs::done() {
  std::lock_guard lk(mu_);
  if (left_ > 0 && --left_ == 0 && !started_) start_locked();
}

void AfterJobs::start_locked() {
  try {
    thread_ = std::thread([this] { run(); });
    started_ = true;
  } catch (const std::system_error&) {
    // No thread: wait() runs it.
  }
}

void AfterJobs::run() {
  std::optional<WorkerPool::UrgentScope> urgent;
  if (urgent_) urgent.emplace();
  std::exception_ptr error;
  try {
    work_();
  } catch (...) {
    error = std::current_exception();
  }
  std::lock_guard lk(mu_);
  error_ = error;
}

void AfterJobs::wait() {
  bool run_here = false;
  {
    std::lock_guard lk(mu_);
    run_here = !started_;
    started_ = true;
  }
  if (run_here) {
    run();
  } else if (thread_.joinable()) {
    thread_.join();
  }
  std::lock_guard lk(mu_);
  if (error_) std::rethrow_exception(error_);
}

}  // namespace ckptfwd::fwd
