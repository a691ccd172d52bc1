// AfterJobs (after_jobs.h): work started by the last of a set of jobs on a thread of its
// own, before the caller waits for it; never started when the jobs were given up.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>

#include "forwarder/util/after_jobs.h"
#include "forwarder/util/worker_pool.h"

namespace ckptfwd::fwd {
namespace {

using namespace std::chrono_literals;

TEST(AfterJobs, TheLastJobStartsTheWorkOnAThreadOfItsOwn) {
  std::atomic<int> runs{0};
  std::promise<std::thread::id> ran_on;
  std::future<std::thread::id> ran = ran_on.get_future();
  AfterJobs after(3, [&] {
    ++runs;
    ran_on.set_value(std::this_thread::get_id());
  });
  after.done();
  after.done();
  EXPECT_EQ(ran.wait_for(100ms), std::future_status::timeout) << "started before the last job";
  after.done();
  // Running before anyone waits for it: that is the overlap it is for.
  ASSERT_EQ(ran.wait_for(10s), std::future_status::ready);
  EXPECT_NE(ran.get(), std::this_thread::get_id());
  after.wait();
  EXPECT_EQ(runs.load(), 1);
}

TEST(AfterJobs, WithNoJobsItStartsAtOnce) {
  std::promise<void> ran_on;
  std::future<void> ran = ran_on.get_future();
  AfterJobs after(0, [&] { ran_on.set_value(); });
  EXPECT_EQ(ran.wait_for(10s), std::future_status::ready);
  after.wait();
}

TEST(AfterJobs, WaitRethrowsWhatTheWorkThrew) {
  AfterJobs after(1, [] { throw std::runtime_error("checks failed"); });
  after.done();
  EXPECT_THROW(after.wait(), std::runtime_error);
}

TEST(AfterJobs, GivenUpBeforeTheLastJobItNeverRuns) {
  std::atomic<int> runs{0};
  {
    AfterJobs after(2, [&] { ++runs; });
    after.done();
  }
  EXPECT_EQ(runs.load(), 0);
}

TEST(AfterJobs, ItsThreadSubmitsAsUrgentlyAsItsMaker) {
  std::atomic<int> urgent{-1};
  {
    WorkerPool::UrgentScope scope;
    AfterJobs after(1, [&] { urgent = WorkerPool::submitting_urgently() ? 1 : 0; });
    after.done();
    after.wait();
  }
  EXPECT_EQ(urgent.load(), 1);
  AfterJobs after(1, [&] { urgent = WorkerPool::submitting_urgently() ? 1 : 0; });
  after.done();
  after.wait();
  EXPECT_EQ(urgent.load(), 0);
}

}  // namespace
}  // namespace ckptfwd::fwd
