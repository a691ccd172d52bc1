// Restart reads: the first read open of a file of a container stages the views of the
// container's other live files (view_prefetch.h), within its bounds, never a stale one;
// the restore threads are a persistent pool (worker_pool.h).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>

#include "forwarder/restore/view_prefetch.h"
#include "forwarder/util/worker_pool.h"
#include "forwarder_test_util.h"

namespace ckptfwd::fwd::test {
namespace {

// The restore threads' pool: every task runs; one thread keeps submission order; leaving
// drops what has not started (a forwarder exiting does not restore a whole container).
TEST(RestorePool, RunsEveryTaskOnItsThreads) {
  WorkerPool pool(3, WorkerPool::AtExit::kDropQueued);
  EXPECT_EQ(pool.size(), 3);
  std::atomic<int> ran{0};
  for (int i = 0; i < 200; ++i) pool.submit([&] { ran++; });
  pool.wait_idle();
  EXPECT_EQ(ran.load(), 200);
}

TEST(RestorePool, OneThreadRunsInSubmissionOrder) {
  WorkerPool pool(1, WorkerPool::AtExit::kDropQueued);
  std::vector<int> order;
  for (int i = 0; i < 50; ++i) pool.submit([&order, i] { order.push_back(i); });
  pool.wait_idle();
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[i], i);
}

TEST(RestorePool, DestructionDropsWhatHasNotStarted) {
  std::atomic<int> ran{0};
  std::atomic<bool> started{false}, release{false};
  std::thread releaser;
  {
    WorkerPool pool(1, WorkerPool::AtExit::kDropQueued);
    pool.submit([&] {
      started = true;
      while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ran++;
    });
    for (int i = 0; i < 10; ++i) pool.submit([&] { ran++; });
    while (!started.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // The running task is released well after the destructor below dropped the queue.
    releaser = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      release = true;
    });
  }  // drops the 10 queued tasks, then waits for the running one
  releaser.join();
  EXPECT_EQ(ran.load(), 1);
}

TEST(PrefetchBounds, BudgetIsTheSmallestBound) {
  const uint64_t G = 1ull << 30;
  EXPECT_EQ(prefetch_budget(G, 10 * G, 0, 0, 0), G);              // the setting
  EXPECT_EQ(prefetch_budget(G, G, 0, 0, 0), G / 2);               // half the free space
  EXPECT_EQ(prefetch_budget(G, 10 * G, G / 4, G / 8, 0), G / 8);  // the stage limit's rest
  EXPECT_EQ(prefetch_budget(G, 10 * G, G / 4, G, 0), 0u);         // staging over its limit
  EXPECT_EQ(prefetch_budget(G, 10 * G, 0, 0, G / 4), 3 * G / 4);  // in flight counts
  EXPECT_EQ(prefetch_budget(G, 10 * G, 0, 0, 2 * G), 0u);
  EXPECT_EQ(prefetch_budget(0, 10 * G, 0, 0, 0), 0u);  // disabled
}

TEST(PrefetchBounds, WindowFollowsTheOpenedFileAndStopsAtTheBudget) {
  const uint64_t skip = UINT64_MAX;
  std::vector<uint64_t> sizes = {10, 10, skip, 10, 10, 10};
  EXPECT_EQ(prefetch_window(sizes, 1, 1000), (std::vector<size_t>{3, 4, 5, 0}));
  EXPECT_EQ(prefetch_window(sizes, 1, 25), (std::vector<size_t>{3, 4}));
  EXPECT_EQ(prefetch_window(sizes, 4, 30), (std::vector<size_t>{5, 0, 1}));
  EXPECT_TRUE(prefetch_window(sizes, 0, 9).empty());
  EXPECT_TRUE(prefetch_window({}, 0, 100).empty());
  EXPECT_TRUE(prefetch_window({5}, 0, 100).empty());  // only the opened file
}

size_t count_views(const std::string& dir) {
  size_t n = 0;
  DIR* d = opendir(dir.c_str());
  if (!d) return 0;
  while (dirent* de = readdir(d)) {
    std::string name = de->d_name;
    if (name[0] == 'r' && name.size() > 5 && name.compare(name.size() - 5, 5, ".data") == 0) ++n;
  }
  closedir(d);
  return n;
}

uint64_t stat_of(Client& c, const std::string& key) {
  auto js = c.call({"STATS"});
  if (js.size() < 2) return UINT64_MAX;
  size_t at = js[1].find("\"" + key + "\":");
  if (at == std::string::npos) return UINT64_MAX;
  return std::stoull(js[1].substr(at + key.size() + 3));
}

class PrefetchTest : public ForwarderTest {
 protected:
  std::string name(int i) { return data_ + "/f" + std::to_string(i); }
  std::string bytes_of(int i, unsigned gen = 0) { return payload(3000 + 37 * i, i + 100 * gen); }
  // n files written together and committed: one container.
  void write_batch(Client& c, int n, unsigned gen = 0, int only = -1) {
    for (int i = 0; i < n; ++i)
      if (only < 0 || i == only) write_version(c, name(i), bytes_of(i, gen));
    ASSERT_EQ(c.call({"DRAIN"})[0], "OK");
  }
};

TEST_F(PrefetchTest, FirstOpenStagesTheOtherFilesOfItsContainer) {
  timing_.view_grace = std::chrono::milliseconds(60000);
  start();
  auto c = client();
  write_batch(*c, 40);
  EXPECT_EQ(read_through(*c, name(7)), bytes_of(7));
  fwd_->core().prefetch.wait_idle();
  EXPECT_EQ(count_views(paths_.dir), 40u) << "every file of the container is staged";
  EXPECT_EQ(stat_of(*c, "views_prefetched"), 39u);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(read_through(*c, name(i)), bytes_of(i)) << name(i);
  EXPECT_EQ(stat_of(*c, "restores"), 40u) << "each file restored once";
}

TEST_F(PrefetchTest, StagesNoMoreThanItsLimit) {
  timing_.view_grace = std::chrono::milliseconds(60000);
  cfg_.prefetch_bytes = 10 * 3000 + 5000;  // ten files of ~3-4 KB fit, not eleven
  start();
  auto c = client();
  write_batch(*c, 30);
  EXPECT_EQ(read_through(*c, name(0)), bytes_of(0));
  fwd_->core().prefetch.wait_idle();
  uint64_t got = stat_of(*c, "views_prefetched");
  EXPECT_GE(got, 8u);
  EXPECT_LE(got, 10u);
  EXPECT_LE(count_views(paths_.dir), 11u);
  // The rest is staged a window at a time as the opens get there; every byte is right.
  for (int i = 0; i < 30; ++i) EXPECT_EQ(read_through(*c, name(i)), bytes_of(i)) << name(i);
}

TEST_F(PrefetchTest, DisabledStagesOnlyWhatIsOpened) {
  cfg_.prefetch_bytes = 0;
  start();
  auto c = client();
  write_batch(*c, 10);
  EXPECT_EQ(read_through(*c, name(3)), bytes_of(3));
  fwd_->core().prefetch.wait_idle();
  EXPECT_EQ(stat_of(*c, "views_prefetched"), 0u);
  EXPECT_EQ(count_views(paths_.dir), 1u);
}

TEST_F(PrefetchTest, NeverServesAFileOverwrittenInALaterContainer) {
  timing_.view_grace = std::chrono::milliseconds(60000);
  start();
  auto c = client();
  write_batch(*c, 12);
  write_batch(*c, 12, 1, 5);                          // f5 again, in a container of its own
  EXPECT_EQ(read_through(*c, name(0)), bytes_of(0));  // stages the first container's files
  fwd_->core().prefetch.wait_idle();
  EXPECT_EQ(stat_of(*c, "views_prefetched"), 10u) << "f5 of the first container is not live";
  EXPECT_EQ(read_through(*c, name(5)), bytes_of(5, 1));
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(read_through(*c, name(i)), bytes_of(i, i == 5 ? 1 : 0)) << name(i);
  // Overwritten once more after the views were staged: the new bytes, not the view's.
  write_batch(*c, 12, 2, 6);
  EXPECT_EQ(read_through(*c, name(6)), bytes_of(6, 2));
}

TEST_F(PrefetchTest, PrefetchedViewsAreReleasedAfterTheirGrace) {
  timing_.view_grace = std::chrono::milliseconds(200);
  start();
  auto c = client();
  write_batch(*c, 20);
  EXPECT_EQ(read_through(*c, name(0)), bytes_of(0));
  fwd_->core().prefetch.wait_idle();
  for (int i = 0; i < 500 && count_views(paths_.dir) > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(count_views(paths_.dir), 0u) << "prefetched views outlived their grace";
  for (int i = 0; i < 20; ++i) EXPECT_EQ(read_through(*c, name(i)), bytes_of(i)) << name(i);
}

}  // namespace
}  // namespace ckptfwd::fwd::test
