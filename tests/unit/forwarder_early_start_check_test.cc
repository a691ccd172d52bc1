// EarlyStartCheck (early_start_check.h): a forwarder started early is settled by its first
// client that names its settings, and retires when that client's differ.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "forwarder/state/early_start_check.h"

namespace ckptfwd::fwd {
namespace {

using V = EarlyStartCheck::Verdict;

TEST(EarlyStartCheck, NotArmedServesEveryone) {
  EarlyStartCheck c;
  EXPECT_EQ(c.hello(true, 1), V::kServe);
  EXPECT_EQ(c.hello(true, 2), V::kServe);
  EXPECT_FALSE(c.retiring());
}

TEST(EarlyStartCheck, FirstClientWithTheSameSettingsSettlesIt) {
  EarlyStartCheck c;
  c.arm(42);
  EXPECT_EQ(c.hello(false, 0), V::kServe);  // a probe decides nothing
  EXPECT_EQ(c.hello(true, 42), V::kServe);
  EXPECT_EQ(c.hello(true, 7), V::kServe);  // settled: later clients are served whatever
  EXPECT_FALSE(c.retiring());
}

TEST(EarlyStartCheck, FirstClientWithOtherSettingsMakesItRetireForEveryone) {
  EarlyStartCheck c;
  int stops = 0;
  c.arm(42, [&] { ++stops; });
  EXPECT_EQ(c.hello(false, 0), V::kServe);
  EXPECT_EQ(stops, 0);
  EXPECT_EQ(c.hello(true, 7), V::kRetire);
  EXPECT_TRUE(c.retiring());
  EXPECT_EQ(stops, 1);
  EXPECT_EQ(c.hello(true, 42), V::kRetire);  // retiring: nobody is served any more
  EXPECT_EQ(c.hello(false, 0), V::kRetire);
  EXPECT_EQ(stops, 1);  // asked once
}

TEST(EarlyStartCheck, ConcurrentFirstHellosGetOneDecision) {
  for (int round = 0; round < 50; ++round) {
    EarlyStartCheck c;
    c.arm(1);
    std::atomic<int> served{0}, retired{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 8; ++i)
      ts.emplace_back([&, i] { (c.hello(true, i % 2 ? 1 : 2) == V::kServe ? served : retired)++; });
    for (auto& t : ts) t.join();
    // Either a matching client came first (all served) or a differing one (all retired).
    EXPECT_TRUE(served == 8 || retired == 8) << served << " served, " << retired << " retired";
  }
}

}  // namespace
}  // namespace ckptfwd::fwd
