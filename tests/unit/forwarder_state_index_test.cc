// State finds a path's versions through an index by path (an open looks at its own
// path's versions only): it must follow adds, renames, recovery and forgets exactly.
#include "forwarder_test_util.h"

namespace ckptfwd::fwd::test {
namespace {

TEST(StateIndex, LookupsByPathFollowRenamesAndForgets) {
  Config cfg;
  Stats stats;
  State s(cfg, stats, "/nonexistent-ckptfwd-test-dir");
  s.retire_grace = std::chrono::milliseconds(0);
  std::lock_guard<std::mutex> g(s.mu);
  Version& a1 = s.add("/d/a", 0, 1, 1, 0644);
  uint64_t a1_vid = a1.vid;
  Version& a2 = s.add("/d/a", 0, 1, 1, 0644);
  uint64_t a2_vid = a2.vid;
  Version& b = s.add("/d/b", 0, 1, 1, 0644);
  uint64_t b_vid = b.vid;
  ASSERT_NE(s.newest("/d/a"), nullptr);
  EXPECT_EQ(s.newest("/d/a")->vid, a2_vid) << "the newest of two";
  EXPECT_EQ(s.pending_of("/d/a").size(), 2u);
  bool preparing = true;
  EXPECT_EQ(s.open_for_write("/d/b", &preparing)->vid, b_vid);
  EXPECT_FALSE(preparing);

  s.set_path(*s.find(a2_vid), "/d/c");  // a rename
  EXPECT_EQ(s.newest("/d/a")->vid, a1_vid);
  EXPECT_EQ(s.newest("/d/c")->vid, a2_vid);
  EXPECT_EQ(s.pending_of("/d/a").size(), 1u);

  s.forget(a1_vid);
  EXPECT_EQ(s.newest("/d/a"), nullptr);
  EXPECT_TRUE(s.pending_of("/d/a").empty());
  EXPECT_EQ(s.newest("/d/c")->vid, a2_vid);

  Version& r = s.insert_recovered(1000, "/d/a");
  r.order = s.next_order++;
  EXPECT_EQ(s.newest("/d/a")->vid, 1000u);
  s.find(b_vid)->dropped = true;
  EXPECT_EQ(s.newest("/d/b"), nullptr) << "a dropped version is not served";
  EXPECT_EQ(s.open_for_write("/d/b", &preparing), nullptr);
  s.find(a2_vid)->ready = false;
  EXPECT_EQ(s.open_for_write("/d/c", &preparing), nullptr);
  EXPECT_TRUE(preparing) << "a version being prepared is reported";
}

}  // namespace
}  // namespace ckptfwd::fwd::test
