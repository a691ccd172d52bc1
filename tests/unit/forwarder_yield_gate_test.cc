// The yield gate (yield_gate.h): bulk work waits while the application writes, for at most
// max_hold in a row, never while something waits for the forwarder; the activity word the
// library stores is read through the session's file; the pool holds only tasks queued
// without urgency.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include "base/monotonic.h"
#include "base/pause_point.h"
#include "core_test_util.h"
#include "forwarder/util/worker_pool.h"
#include "forwarder/util/yield_gate.h"
#include "wire/activity.h"

namespace ckptfwd::fwd {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kQuiet = YieldGate::kQuietNs;

TEST(YieldGate, HoldsWhileAWriteIsRecentThenGoes) {
  YieldGate gate(2000, nullptr);
  const int64_t t = 10'000 * kMs;
  EXPECT_EQ(gate.hold_ns(t), 0) << "nothing written yet";
  gate.note_write(t);
  EXPECT_EQ(gate.hold_ns(t + 5 * kMs), kQuiet - 5 * kMs) << "held until the write is quiet";
  EXPECT_EQ(gate.hold_ns(t + kQuiet), 0);
}

// A worker asks every ms from t to t + span while the application writes every `every`
// ms; the ms held.
int64_t held_ms(YieldGate& gate, int64_t t, int64_t span_ms, int64_t every_ms) {
  int64_t held = 0;
  for (int64_t ms = 0; ms < span_ms; ++ms) {
    if (ms % every_ms == 0) gate.note_write(t + ms * kMs);
    held += gate.hold_ns(t + ms * kMs) > 0;
  }
  return held;
}

TEST(YieldGate, AWriteBurstShorterThanTheBudgetIsHeldWhole) {
  YieldGate gate(100, nullptr);
  EXPECT_EQ(held_ms(gate, 10'000 * kMs, 90, 5), 90);
}

TEST(YieldGate, ALongWriterLeavesCompressionAtLeastHalfTheTime) {
  std::atomic<uint64_t> held{0};
  YieldGate gate(100, &held);
  const int64_t t = 10'000 * kMs;
  // Writes every 10 ms for a second: the budget's 100 ms, then at most half of the rest.
  const int64_t n = held_ms(gate, t, 1000, 10);
  EXPECT_GE(n, 100);
  EXPECT_LE(n, 100 + 450 + 10);
  // Writes every 30 ms (a quiet moment between them) do not refill it faster.
  const int64_t m = held_ms(gate, t + 1000 * kMs, 3000, 30);
  EXPECT_LE(m, 1500 + 10);
  // Quiet for as long as the budget: a new burst is held whole again.
  EXPECT_EQ(gate.hold_ns(t + 4000 * kMs + 100 * kMs), 0);
  EXPECT_EQ(held_ms(gate, t + 4200 * kMs, 90, 5), 90);
  gate.add_held(7);
  EXPECT_EQ(held.load(), 7u);
}

TEST(YieldGate, NeverHoldsWhileSomethingWaitsOrWhenOff) {
  bool waiting = true;
  YieldGate gate(2000, nullptr);
  gate.set_demand([&] { return waiting; });
  gate.note_write(1000 * kMs);
  EXPECT_EQ(gate.hold_ns(1001 * kMs), 0) << "an exit wait, a drain or shutdown";
  waiting = false;
  EXPECT_GT(gate.hold_ns(1001 * kMs), 0);
  YieldGate off(0, nullptr);
  off.note_write(1000 * kMs);
  EXPECT_EQ(off.hold_ns(1001 * kMs), 0) << "CKPTFWD_YIELD_MS=0";
}

class YieldGateFile : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.empty()); }
  std::string file() const { return tmp_ / activity::kFileName; }
  test::TempDir tmp_;
  const std::string dir_ = tmp_.path();
};

TEST_F(YieldGateFile, ReadsTheWordTheLibraryStores) {
  YieldGate gate(2000, nullptr);
  std::string err;
  ASSERT_TRUE(gate.attach(dir_, &err)) << err;
  struct stat st {};
  ASSERT_EQ(stat(file().c_str(), &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(activity::kBytes));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // What a process under the library does after a captured write (track/activity_clock.h),
  // through a mapping of its own.
  FILE* f = fopen(file().c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  uint64_t magic = 0;
  ASSERT_EQ(fread(&magic, 8, 1, f), 1u);
  EXPECT_EQ(magic, activity::kMagic);
  const int64_t now = monotonic_ns();
  uint64_t word = static_cast<uint64_t>(now);
  fseek(f, activity::kClockOffset, SEEK_SET);
  fwrite(&word, 8, 1, f);
  fclose(f);
  EXPECT_GT(gate.hold_ns(now + kMs), 0);
  EXPECT_EQ(gate.hold_ns(now + kQuiet), 0);
  // A time ahead of this clock (another clock, a hostile value) counts as no write.
  f = fopen(file().c_str(), "r+b");
  word = static_cast<uint64_t>(now) + 3600 * 1000 * kMs;
  fseek(f, activity::kClockOffset, SEEK_SET);
  fwrite(&word, 8, 1, f);
  fclose(f);
  EXPECT_EQ(gate.hold_ns(now + kMs), 0);
}

TEST_F(YieldGateFile, ALaterForwarderKeepsTheFileAndItsWord) {
  {
    YieldGate first(2000, nullptr);
    ASSERT_TRUE(first.attach(dir_, nullptr));
  }
  FILE* f = fopen(file().c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  const uint64_t word = static_cast<uint64_t>(monotonic_ns());
  fseek(f, activity::kClockOffset, SEEK_SET);
  fwrite(&word, 8, 1, f);
  fclose(f);
  YieldGate second(2000, nullptr);
  ASSERT_TRUE(second.attach(dir_, nullptr));
  EXPECT_GT(second.hold_ns(static_cast<int64_t>(word) + kMs), 0)
      << "the libraries' mappings of the file stay the word the new forwarder reads";
}

TEST_F(YieldGateFile, RefusesAFileThatIsNotARegularOneOfOurs) {
  ASSERT_EQ(symlink("/etc/passwd", file().c_str()), 0);
  YieldGate gate(2000, nullptr);
  std::string err;
  EXPECT_FALSE(gate.attach(dir_, &err));
  EXPECT_NE(err.find(file()), std::string::npos) << err;
  gate.note_write(1000 * kMs);
  EXPECT_GT(gate.hold_ns(1001 * kMs), 0) << "write opens still count";
}

TEST(YieldGatePool, BulkTasksWaitUrgentOnesDoNot) {
  std::atomic<uint64_t> held{0};
  YieldGate gate(2000, &held);
  WorkerPool pool(1);
  pool.set_gate(&gate);
  // The application writes for the next 150 ms (a write every 5 ms).
  std::atomic<bool> writing{true};
  std::thread app([&] {
    const int64_t end = monotonic_ns() + 150 * kMs;
    while (monotonic_ns() < end) {
      gate.note_write(monotonic_ns());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    writing = false;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::atomic<bool> bulk_ran_while_writing{false}, bulk_done{false};
  pool.submit([&] {
    bulk_ran_while_writing = writing.load();
    bulk_done = true;
  });
  std::atomic<bool> urgent_ran_while_writing{false};
  {
    WorkerPool::UrgentScope urgent;
    TaskGroup g(pool);
    g.run([&] { urgent_ran_while_writing = writing.load(); });
    g.wait();
  }
  EXPECT_TRUE(urgent_ran_while_writing) << "an fsync's task is never held";
  app.join();
  pool.wait_idle();
  EXPECT_TRUE(bulk_done);
  EXPECT_FALSE(bulk_ran_while_writing) << "queued bulk work started while the application wrote";
  EXPECT_GT(held.load(), 50 * static_cast<uint64_t>(kMs));
}

// A bulk task that started before the application began to write stops at its next pause
// point until the writes are over; an urgent task's pause points do not wait.
TEST(YieldGatePool, ABulkTaskAlreadyRunningWaitsAtItsPausePoints) {
  std::atomic<uint64_t> held{0};
  YieldGate gate(2000, &held);
  WorkerPool pool(1);
  pool.set_gate(&gate);
  std::atomic<bool> started{false}, stop{false}, writing{false};
  std::atomic<int> steps{0}, steps_while_writing{0};
  auto work = [&] {  // steps of about 1 ms with a pause point after each
    started = true;
    while (!stop) {
      const int64_t end = monotonic_ns() + kMs;
      while (monotonic_ns() < end) {
      }
      pause_point();
      ++steps;
      if (writing) ++steps_while_writing;
    }
  };
  pool.submit(work);
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GT(steps.load(), 5) << "the task runs while nobody writes";
  // The application writes for 120 ms (a write every 5 ms).
  gate.note_write(monotonic_ns());
  writing = true;
  const int64_t end = monotonic_ns() + 120 * kMs;
  while (monotonic_ns() < end) {
    gate.note_write(monotonic_ns());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  writing = false;
  // (one step may end between the first write and `writing`)
  EXPECT_LE(steps_while_writing.load(), 1) << "the running task went on beside the writes";
  const int before = steps.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_GT(steps.load(), before + 5) << "the task goes on once the writes are over";
  stop = true;
  pool.wait_idle();
  EXPECT_GT(held.load(), 80 * static_cast<uint64_t>(kMs));

  // The same steps as an urgent task: never held.
  stop = false;
  steps = steps_while_writing = 0;
  gate.note_write(monotonic_ns());
  writing = true;
  {
    WorkerPool::UrgentScope urgent;
    TaskGroup g(pool);
    g.run([&] {
      for (int i = 0; i < 10; ++i) {
        gate.note_write(monotonic_ns());
        pause_point();
        if (writing) ++steps_while_writing;
      }
    });
    g.wait();
  }
  writing = false;
  EXPECT_EQ(steps_while_writing.load(), 10);
}

}  // namespace
}  // namespace ckptfwd::fwd
