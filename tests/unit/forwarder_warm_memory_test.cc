// Warm memory for fsync snapshots (warm_memory.h): the best-fitting region is taken, what
// is kept stays under the cap (the oldest go first), and prepare() adds only what no kept
// region serves and the cap leaves room for.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <chrono>
#include <thread>

#include "forwarder/staging/warm_memory.h"

namespace ckptfwd::fwd {
namespace {

constexpr uint64_t kMiB = 1 << 20;

void* region(uint64_t len) {
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  return p;
}

struct WarmMemory : ::testing::Test {
  void SetUp() override {
    warm::drop_all();
    warm::set_cap(6 * kMiB);
  }
  void TearDown() override {
    warm::drop_all();
    warm::set_cap(128 * kMiB);
  }
};

TEST_F(WarmMemory, TheSmallestRegionThatFitsIsTaken) {
  warm::give(region(4 * kMiB), 4 * kMiB);
  warm::give(region(2 * kMiB), 2 * kMiB);
  EXPECT_EQ(warm::kept_bytes(), 6 * kMiB);
  EXPECT_FALSE(warm::has(kMiB - 1)) << "2 MiB is more than twice that";
  EXPECT_FALSE(warm::has(4 * kMiB + 1));
  uint64_t len = 0;
  void* p = warm::take(kMiB + 1, &len);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(len, 2 * kMiB) << "the 4 MiB region would fit too, the 2 MiB one fits best";
  static_cast<uint8_t*>(p)[len - 1] = 1;  // the caller's to use
  EXPECT_EQ(warm::kept_bytes(), 4 * kMiB);
  EXPECT_EQ(warm::take(kMiB + 1, &len), nullptr) << "4 MiB is more than twice that";
  warm::give(p, 2 * kMiB);
  EXPECT_TRUE(warm::has(kMiB + 1));
}

TEST_F(WarmMemory, TheCapDropsTheOldestFirst) {
  warm::give(region(kMiB), kMiB);
  warm::give(region(4 * kMiB), 4 * kMiB);
  warm::give(region(2 * kMiB), 2 * kMiB);  // 7 MiB: over the cap of 6
  EXPECT_EQ(warm::kept_bytes(), 6 * kMiB);
  EXPECT_FALSE(warm::has(kMiB - 100)) << "the oldest (1 MiB) went";
  EXPECT_TRUE(warm::has(4 * kMiB));
  warm::give(region(8 * kMiB), 8 * kMiB);  // larger than the cap: not kept at all
  EXPECT_EQ(warm::kept_bytes(), 6 * kMiB);
  EXPECT_FALSE(warm::has(8 * kMiB));
}

TEST_F(WarmMemory, PrepareAddsOnlyWhatIsNotServedAndFitsTheCap) {
  warm::give(region(2 * kMiB), 2 * kMiB);
  // 1.5 MiB is served by the 2 MiB region; 3 MiB fits beside it; 7 MiB never fits;
  // the second 3 MiB no longer fits once the first is counted.
  warm::prepare_now({kMiB + kMiB / 2, 3 * kMiB, 7 * kMiB, 3 * kMiB});
  EXPECT_EQ(warm::kept_bytes(), 5 * kMiB);
  EXPECT_TRUE(warm::has(3 * kMiB));
  uint64_t len = 0;
  auto* p = static_cast<volatile uint8_t*>(warm::take(3 * kMiB, &len));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(len, 3 * kMiB);
  p[0] = 1;
  p[len - 1] = 2;
  EXPECT_EQ(p[0] + p[len - 1], 3);
  warm::give(const_cast<uint8_t*>(p), len);
}

TEST_F(WarmMemory, PrepareRunsOnAThreadOfItsOwn) {
  warm::prepare({kMiB, 2 * kMiB});
  for (int i = 0; i < 1000 && warm::preparing(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(warm::preparing());
  EXPECT_EQ(warm::kept_bytes(), 3 * kMiB);
  warm::prepare({kMiB});  // served: nothing started
  EXPECT_FALSE(warm::preparing());
  EXPECT_EQ(warm::kept_bytes(), 3 * kMiB);
}

}  // namespace
}  // namespace ckptfwd::fwd
