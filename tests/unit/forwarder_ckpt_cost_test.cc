// What a checkpoint cost the application (ckpt_cost.h): the slowest process's blocked
// time per checkpoint, waves closed together merged into one checkpoint, only complete
// checkpoints counted, time handed over before a version joins a wave kept with it.
#include <gtest/gtest.h>

#include "forwarder/state/ckpt_cost.h"
#include "forwarder/state/stats.h"

namespace ckptfwd::fwd::test {
namespace {

using Clock = CheckpointCosts::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

Clock::time_point at(int s) { return Clock::time_point{} + seconds(1000 + s); }
constexpr int64_t kMs = 1000000;

TEST(CheckpointCosts, AVersionReopenedInPlaceCountsAtItsLastClose) {
  CheckpointCosts c;
  c.blocked(1, 10, 100 * kMs);
  c.joined(1, 1, at(0), 1000);
  c.reopened(1);  // appended to by its process before its commit
  c.blocked(1, 10, 50 * kMs);
  c.joined(1, 2, at(5), 3000);
  c.committed(1, at(6));
  CheckpointCosts::Summary s = c.summary();
  EXPECT_EQ(s.checkpoints, 1u) << "the first wave has no file left: not a checkpoint";
  EXPECT_EQ(s.durable_ns, 1000 * kMs) << "from its last close, not its first";
  EXPECT_EQ(s.blocked_ns, 150 * kMs) << "both opens' time";
  EXPECT_EQ(s.bytes, 3000u);
}

TEST(CheckpointCosts, RecordsOfCompleteCheckpointsOnceAndAgainWhenChanged) {
  CheckpointCosts c;
  c.publish_to(nullptr, milliseconds(100));
  c.blocked(1, 10, 200 * kMs);
  c.blocked(2, 11, 300 * kMs);
  c.joined(1, 1, at(0), 1000);
  c.joined(2, 1, at(0), 3000);
  c.committed(1, at(1));
  EXPECT_TRUE(c.take_records().empty()) << "not complete yet";
  c.committed(2, at(2));
  std::vector<CheckpointCosts::Record> r = c.take_records();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].blocked_ns, 300 * kMs);
  EXPECT_EQ(r[0].processes, 2u);
  EXPECT_EQ(r[0].bytes, 4000u);
  EXPECT_EQ(r[0].files, 2u);
  EXPECT_EQ(r[0].waves, 1u);
  EXPECT_TRUE(c.take_records().empty()) << "handed out once";
  // An exit wait that ends after the commit: the checkpoint's record again, changed.
  c.blocked_on_newest({2}, 11, 100 * kMs);
  r = c.take_records();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].blocked_ns, 400 * kMs);
  // A second checkpoint: only its record.
  c.blocked(3, 10, 50 * kMs);
  c.joined(3, 2, at(10), 500);
  c.committed(3, at(11));
  r = c.take_records();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].bytes, 500u);
  // As JSON, times on the wall clock: first close 11 s before "now" at the second commit.
  std::string j = CheckpointCosts::checkpoint_json(r[0], "n1", "job7", 42, 100000 * kMs, at(21));
  EXPECT_NE(j.find("\"source\":\"checkpoint\",\"node\":\"n1\",\"job\":\"job7\",\"pid\":42"),
            std::string::npos)
      << j;
  EXPECT_NE(j.find("\"first_close_ns\":" + std::to_string(89000 * kMs)), std::string::npos) << j;
  EXPECT_NE(j.find("\"durable_ns\":" + std::to_string(1000 * kMs)), std::string::npos) << j;
  EXPECT_NE(j.find("\"blocked_ns\":" + std::to_string(50 * kMs)), std::string::npos) << j;
}

TEST(CheckpointCosts, SlowestProcessOfACompleteCheckpoint) {
  Stats stats;
  CheckpointCosts c;
  c.publish_to(&stats, seconds(3));
  // Two ranks (pids 10, 11) write one file each: their writes and closes (from the
  // library) arrive with CLOSE before the batcher puts the files into wave 1.
  c.blocked(1, 10, 200 * kMs);
  c.blocked(2, 11, 300 * kMs);
  c.joined(1, 1, at(0), 1000);
  c.joined(2, 1, at(0), 3000);
  EXPECT_EQ(c.summary().checkpoints, 0u) << "nothing committed yet";
  c.committed(1, at(1));
  EXPECT_EQ(c.summary().checkpoints, 0u) << "one file still pending";
  c.committed(2, at(2));
  CheckpointCosts::Summary s = c.summary();
  EXPECT_EQ(s.checkpoints, 1u);
  EXPECT_EQ(s.blocked_ns, 300 * kMs);  // the slower rank
  EXPECT_EQ(s.durable_ns, 2000 * kMs);
  EXPECT_EQ(s.bytes, 4000u);
  // Rank 10's exit wait ends after the commit: it joins the checkpoint it waited for.
  c.blocked_on_newest({1, 99}, 10, 150 * kMs);
  EXPECT_EQ(c.summary().blocked_ns, 350 * kMs);
  // Published into the stats record.
  EXPECT_EQ(stats.checkpoints_measured.load(), 1u);
  EXPECT_EQ(stats.ckpt_blocked_ns.load(), static_cast<uint64_t>(350 * kMs));
  EXPECT_EQ(stats.ckpt_durable_ns.load(), static_cast<uint64_t>(2000 * kMs));
  EXPECT_EQ(stats.ckpt_bytes.load(), 4000u);
}

TEST(CheckpointCosts, WavesClosedTogetherAreOneCheckpointMeansOverCheckpoints) {
  CheckpointCosts c;
  c.publish_to(nullptr, seconds(3));
  // Step 1: rank files (wave 1) and an index file (wave 2) closed 1 s later.
  c.blocked(1, 10, 100 * kMs);
  c.blocked(2, 10, 50 * kMs);
  c.joined(1, 1, at(0), 100);
  c.joined(2, 2, at(1), 10);
  // Step 2, a minute later: one file, wave 3.
  c.blocked(3, 10, 500 * kMs);
  c.joined(3, 3, at(60), 100);
  for (uint64_t v : {1, 2}) c.committed(v, at(2));
  c.committed(3, at(61));
  CheckpointCosts::Summary s = c.summary();
  EXPECT_EQ(s.checkpoints, 2u);
  EXPECT_EQ(s.blocked_ns, (150 + 500) * kMs / 2);  // step 1 is 100 + 50 of one process
  EXPECT_EQ(s.durable_ns, (1000 + 1000) * kMs / 2);
  EXPECT_EQ(s.bytes, (110u + 100u) / 2);
}

TEST(CheckpointCosts, SupersededFilesAndUnmeasuredWaves) {
  CheckpointCosts c;
  c.publish_to(nullptr, milliseconds(0));
  c.blocked(1, 10, 10 * kMs);
  c.joined(1, 1, at(0), 100);
  c.joined(2, 1, at(0), 100);
  c.committed(1, at(1));
  c.forgotten(2);  // superseded before its commit: no longer a file of the checkpoint
  EXPECT_EQ(c.summary().checkpoints, 1u);
  EXPECT_EQ(c.summary().bytes, 100u);
  // A wave nobody measured (recovered files of an earlier forwarder) is not a checkpoint.
  c.joined(3, 2, at(30), 100);
  c.committed(3, at(31));
  EXPECT_EQ(c.summary().checkpoints, 1u);
  // Committed versions being forgotten change nothing.
  c.forgotten(1);
  EXPECT_EQ(c.summary().blocked_ns, 10 * kMs);
}

TEST(CheckpointCosts, TimeOfAVersionClosedUnchangedGoesToItsSnapshot) {
  CheckpointCosts c;
  c.publish_to(nullptr, seconds(3));
  // fsync: writes and the wait go to the snapshot (vid 2), which commits in wave 1.
  c.joined(2, 1, at(0), 500);
  c.blocked(2, 10, 400 * kMs);
  c.committed(2, at(1));
  // The open version (vid 1) is then closed unchanged: its close time joins the snapshot.
  c.blocked(1, 10, 20 * kMs);
  EXPECT_TRUE(c.knows(1));
  c.forgotten(1, 2);
  EXPECT_EQ(c.summary().blocked_ns, 420 * kMs);
  // A version dropped without a wave takes its time with it.
  c.blocked(7, 10, 5 * kMs);
  c.forgotten(7);
  EXPECT_FALSE(c.knows(7));
  EXPECT_EQ(c.summary().blocked_ns, 420 * kMs);
}

}  // namespace
}  // namespace ckptfwd::fwd::test
