// Work that needs a set of jobs finished, started by the last of them on a thread of its
// own, so that it overlaps with what the caller still does with the jobs' results.
//
// Made for no jobs, it is a thread whose work overlaps with the caller's from the start:
// the in-place checks of an fsync (in_place_rehash.h) run on one from the batch's first
// chunk on, reading each piece of the staged file once its chunks are encoded
// (encode_front.h), while the writer puts the encoded chunks on the store.
#pragma once
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace ckptfwd::fwd {

class AfterJobs {
 public:
  // work runs once `jobs` calls of done() were made (at once for none). Its thread
  // submits to a WorkerPool as urgently as the thread that made this object.
  AfterJobs(size_t jobs, std::function<void()> work);
  // Never started (the caller gave up on the jobs): not run. Started: waited for.
  ~AfterJobs();
  AfterJobs(const AfterJobs&) = delete;
  AfterJobs& operator=(const AfterJobs&) = delete;

  // One job finished (any thread).
  void done();
  // Once every job finished: waits for the work (runs it on this thread if no thread
  // could be made for it) and rethrows what it threw.
  void wait();

 private:
  void start_locked();
  void run();

  std::function<void()> work_;
  const bool urgent_;
  std::mutex mu_;
  size_t left_;
  bool started_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace ckptfwd::fwd
