// The forwarder's persistent worker pool (worker_pool.h): ordered results with a bounded
// window (backpressure), error propagation, and shutdown with work queued.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "forwarder/util/worker_pool.h"

namespace ckptfwd::fwd {
namespace {

TEST(WorkerPool, ThreadsAreReusedAcrossBatches) {
  WorkerPool pool(2);
  std::mutex mu;
  std::set<std::thread::id> seen;
  for (int batch = 0; batch < 20; ++batch)
    pool_for(pool, 8, [&](size_t) {
      std::lock_guard lk(mu);
      seen.insert(std::this_thread::get_id());
    });
  // Created once: never more thread identities than the pool has threads.
  EXPECT_LE(seen.size(), 2u);
  EXPECT_GE(seen.size(), 1u);
}

TEST(WorkerPool, OrderedResultsComeInJobOrder) {
  WorkerPool pool(3);
  // Later jobs finish first (earlier ones sleep longer): the consumer still sees 0..n-1.
  OrderedResults<int> r(pool, 12, 5, [](size_t i) {
    std::this_thread::sleep_for(std::chrono::milliseconds((12 - i) % 4));
    return static_cast<int>(i) * 10;
  });
  int v = -1;
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(r.next(v));
    EXPECT_EQ(v, i * 10);
  }
  EXPECT_FALSE(r.next(v));
}

TEST(WorkerPool, WindowBoundsResultsNotTaken) {
  WorkerPool pool(4);
  std::atomic<int> made{0};
  const size_t window = 3;
  OrderedResults<int> r(pool, 50, window, [&](size_t i) {
    made++;
    return static_cast<int>(i);
  });
  // A consumer slower than the producers: however long it waits, no more than `window`
  // jobs are ever produced ahead of it.
  int v;
  for (int taken = 0; taken < 50; ++taken) {
    std::this_thread::sleep_for(std::chrono::milliseconds(taken < 3 ? 20 : 0));
    EXPECT_LE(r.outstanding(), window);
    EXPECT_LE(made.load(), taken + static_cast<int>(window));
    ASSERT_TRUE(r.next(v));
    EXPECT_EQ(v, taken);
  }
  EXPECT_EQ(made.load(), 50);
}

TEST(WorkerPool, AJobsExceptionReachesTheConsumerInOrder) {
  WorkerPool pool(2);
  std::atomic<int> started{0};
  int v = 0;
  {
    OrderedResults<int> r(pool, 100, 4, [&](size_t i) -> int {
      started++;
      if (i == 5) throw std::runtime_error("chunk 5 failed");
      return static_cast<int>(i);
    });
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(r.next(v));
    EXPECT_THROW(
        {
          try {
            r.next(v);
          } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "chunk 5 failed");
            throw;
          }
        },
        std::runtime_error);
  }  // the destructor waited for what was in flight
  // Nothing after the failure was started beyond the window.
  EXPECT_LE(started.load(), 5 + 1 + 4);
}

TEST(WorkerPool, TaskGroupRethrowsAndWaitsForAll) {
  WorkerPool pool(2);
  std::atomic<int> ran{0};
  TaskGroup g(pool);
  for (int i = 0; i < 10; ++i)
    g.run([&, i] {
      ran++;
      if (i == 3) throw std::runtime_error("task 3");
    });
  EXPECT_THROW(g.wait(), std::runtime_error);
  EXPECT_EQ(ran.load(), 10);  // the others still ran
  g.wait();                   // the error was reported once
}

TEST(WorkerPool, ShutdownRunsQueuedTasksThenJoins) {
  std::atomic<int> ran{0};
  {
    WorkerPool pool(1);
    for (int i = 0; i < 20; ++i)
      pool.submit([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ran++;
      });
  }  // destructor: everything queued ran, threads joined
  EXPECT_EQ(ran.load(), 20);
}

TEST(WorkerPool, DroppingOrderedResultsEarlyWaitsForItsJobs) {
  WorkerPool pool(2);
  std::atomic<int> done{0};
  {
    OrderedResults<int> r(pool, 1000, 6, [&](size_t i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      done++;
      return static_cast<int>(i);
    });
    int v;
    ASSERT_TRUE(r.next(v));
  }  // a writer that failed leaves: no job may run on into a dead frame
  int after = done.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(done.load(), after);
  EXPECT_LE(after, 1 + 6);
}

// A pool of one thread, held by a task until release(), so that what is submitted
// meanwhile queues; note(what) makes a task that records `what` in order().
class HeldPool {
  std::promise<void> go_;
  std::shared_future<void> gone_ = go_.get_future().share();
  bool released_ = false;
  std::mutex mu_;
  std::vector<std::string> order_;

 public:
  WorkerPool pool{1};  // last: it goes first, running what is queued while the rest lives

  HeldPool() {
    std::promise<void> started;
    pool.submit([this, &started] {
      started.set_value();
      gone_.wait();  // holds the only thread while the rest is queued
    });
    started.get_future().wait();
  }
  ~HeldPool() {
    if (!released_) release();  // a failed test must not leave the pool held
  }
  void release() {
    released_ = true;
    go_.set_value();
  }
  std::function<void()> note(std::string what) {
    return [this, what] {
      std::lock_guard lk(mu_);
      order_.push_back(what);
    };
  }
  std::vector<std::string> order() {
    pool.wait_idle();
    return order_;
  }
};

TEST(WorkerPool, UrgentTasksRunBeforeTasksQueuedEarlier) {
  HeldPool h;
  h.pool.submit(h.note("bulk1"));
  h.pool.submit(h.note("bulk2"));
  {
    WorkerPool::UrgentScope urgent;
    h.pool.submit(h.note("urgent1"));
    TaskGroup group(h.pool);
    group.run(h.note("urgent2"));
    h.release();
    group.wait();
  }
  h.pool.submit(h.note("bulk3"));  // the scope ended: queued behind the others
  EXPECT_EQ(h.order(), (std::vector<std::string>{"urgent1", "urgent2", "bulk1", "bulk2", "bulk3"}));
}

// The in-place checks' walks (an urgent batch's tasks) queue the second reads of the chunks
// they passed: those must not wait behind a batch of closed files queued before them.
TEST(WorkerPool, WhatAnUrgentTaskSubmitsIsUrgentAndWhatANormalOneSubmitsIsNot) {
  HeldPool h;
  h.pool.submit([&] {
    h.note("bulk")();
    h.pool.submit(h.note("from bulk"));
  });
  h.pool.submit(h.note("bulk2"));
  {
    WorkerPool::UrgentScope urgent;
    h.pool.submit([&] {
      h.note("urgent")();
      h.pool.submit(h.note("from urgent"));
    });
  }
  h.release();
  EXPECT_EQ(h.order(),
            (std::vector<std::string>{"urgent", "from urgent", "bulk", "bulk2", "from bulk"}));
}

}  // namespace
}  // namespace ckptfwd::fwd

namespace ckptfwd::fwd {
namespace {

int own_nice() { return getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())); }

// The application's threads get the core before a bulk task that started before they
// began to write: bulk tasks run at the bulk nice value, urgent ones (an fsync's batch)
// on threads of their own at the forwarder's, even while every bulk thread is busy.
TEST(WorkerPool, BulkTasksRunNicedAndUrgentOnesOnThreadsOfTheirOwn) {
  const int base = own_nice();
  if (base >= 10) GTEST_SKIP() << "the test runs at nice " << base;
  WorkerPool pool(2);
  pool.set_bulk_nice(10);
  EXPECT_EQ(pool.size(), 2) << "a batch's window counts the threads of one lane";
  std::promise<void> release;
  std::shared_future<void> go = release.get_future().share();
  std::atomic<int> bulk_nice{-100}, urgent_nice{-100};
  std::atomic<int> bulk_started{0};
  for (int i = 0; i < 2; ++i)
    pool.submit([&] {
      bulk_nice = own_nice();
      bulk_started++;
      go.wait();  // both bulk threads busy
    });
  while (bulk_started < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  {
    WorkerPool::UrgentScope urgent;
    TaskGroup group(pool);
    group.run([&] { urgent_nice = own_nice(); });
    group.wait();  // runs although both bulk threads are held
  }
  release.set_value();
  pool.wait_idle();
  EXPECT_EQ(bulk_nice, 10);
  EXPECT_EQ(urgent_nice, base);
}

TEST(WorkerPool, WithoutABulkNiceEveryTaskRunsAsTheForwarder) {
  const int base = own_nice();
  WorkerPool pool(2);
  std::atomic<int> seen{-100};
  pool.submit([&] { seen = own_nice(); });
  pool.wait_idle();
  EXPECT_EQ(seen, base);
}

}  // namespace
}  // namespace ckptfwd::fwd
