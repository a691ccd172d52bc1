// Checkpoint steps from paths and writer ranks (checkpoint_steps.h), on the path shapes
// real codes write: the demo's ckpt_<step>_r<rank>.bin, step directories with per-rank
// HDF5 files and a rank-0 metadata file, OpenFOAM's processor<rank>/<time>/<field>, a
// serial program's ckpt_<step>.dat, files rewritten under one name.
#include <gtest/gtest.h>

#include "checkpoint_steps.h"

namespace ckptfwd::cli {
namespace {

StepFile file(const std::string& path, int rank, uint64_t size = 100, int64_t mtime = 0) {
  StepFile f;
  f.path = path;
  f.rank = rank;
  f.size = size;
  f.stored = size / 2;
  f.mtime_ns = mtime;
  f.nodes = {rank < 2 ? "n0" : "n1"};
  return f;
}

std::vector<std::string> steps_of(const std::vector<Checkpoint>& cps) {
  std::vector<std::string> out;
  for (const Checkpoint& c : cps) out.push_back(c.step);
  return out;
}

TEST(CheckpointSteps, DemoFilesOrderedByStepNumberNotText) {
  std::vector<StepFile> in;
  for (int step : {40, 5, 10})
    for (int r = 0; r < 4; ++r)
      in.push_back(
          file("/run/ckpt/ckpt_" + std::to_string(step) + "_r" + std::to_string(r) + ".bin", r));
  auto cps = group_checkpoints(in);
  EXPECT_EQ(steps_of(cps), (std::vector<std::string>{"5", "10", "40"}));
  for (const Checkpoint& c : cps) {
    EXPECT_EQ(c.files.size(), 4u);
    EXPECT_EQ(c.ranks.size(), 4u);
    EXPECT_EQ(c.nodes, (std::set<std::string>{"n0", "n1"}));
    EXPECT_EQ(c.bytes_in, 400u);
    EXPECT_EQ(c.stored, 200u);
    EXPECT_TRUE(c.complete) << c.missing;
    EXPECT_EQ(c.series, (std::vector<std::string>{"/run/ckpt/ckpt_<step>_r<rank>.bin"}));
  }
  EXPECT_EQ(latest_complete(cps), 2);
}

TEST(CheckpointSteps, WaveCutShortIsIncompleteAndNotLatest) {
  std::vector<StepFile> in;
  for (int step : {10, 20, 30})
    for (int r = 0; r < (step == 30 ? 3 : 4); ++r)
      in.push_back(file("/c/step_" + std::to_string(step) + "/r" + std::to_string(r) + ".dat", r));
  auto cps = group_checkpoints(in);
  ASSERT_EQ(steps_of(cps), (std::vector<std::string>{"10", "20", "30"}));
  EXPECT_FALSE(cps[2].complete);
  EXPECT_EQ(cps[2].missing, "3 of 4 files of /c/step_<step>/r<rank>.dat");
  EXPECT_EQ(latest_complete(cps), 1);
}

TEST(CheckpointSteps, RankFilesAndMetadataOfOneStepDirectoryAreOneCheckpoint) {
  // One step only (nothing varies between steps): the step is still read from the
  // directory, not from the "5" of ".h5"; the rank-0 metadata file joins it.
  std::vector<StepFile> in;
  for (int r = 0; r < 4; ++r)
    in.push_back(file("/c/step_0040/r000" + std::to_string(r) + ".h5", r));
  in.push_back(file("/c/step_0040/meta.txt", 0));
  auto cps = group_checkpoints(in);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].step, "0040");
  EXPECT_EQ(cps[0].files.size(), 5u);
  EXPECT_EQ(cps[0].series.size(), 2u);
  EXPECT_TRUE(cps[0].complete);
  // With a second step, both series still merge per step.
  for (int r = 0; r < 4; ++r)
    in.push_back(file("/c/step_0050/r000" + std::to_string(r) + ".h5", r));
  in.push_back(file("/c/step_0050/meta.txt", 0));
  cps = group_checkpoints(in);
  EXPECT_EQ(steps_of(cps), (std::vector<std::string>{"0040", "0050"}));
  EXPECT_EQ(cps[1].files.size(), 5u);
}

TEST(CheckpointSteps, RankFieldIsTheRunEqualToTheRankInEveryFile) {
  // Step 3 of rank 3 has two runs equal to 3; step 6 tells which one is the rank.
  std::vector<StepFile> in;
  for (int step : {3, 6})
    for (int r = 0; r < 4; ++r)
      in.push_back(file("/c/s" + std::to_string(step) + "/r" + std::to_string(r), r));
  auto cps = group_checkpoints(in);
  ASSERT_EQ(steps_of(cps), (std::vector<std::string>{"3", "6"}));
  EXPECT_EQ(cps[0].files.size(), 4u);
  EXPECT_EQ(cps[0].series, (std::vector<std::string>{"/c/s<step>/r<rank>"}));
}

TEST(CheckpointSteps, OpenFoamTimesAreDecimals) {
  std::vector<StepFile> in;
  for (std::string t : {"0.1", "0.005", "0.01"})
    for (int r = 0; r < 2; ++r)
      for (std::string field : {"U", "p"})
        in.push_back(file("/case/processor" + std::to_string(r) + "/" + t + "/" + field, r));
  auto cps = group_checkpoints(in);
  EXPECT_EQ(steps_of(cps), (std::vector<std::string>{"0.005", "0.01", "0.1"}));
  for (const Checkpoint& c : cps) {
    EXPECT_EQ(c.files.size(), 4u);
    EXPECT_EQ(c.ranks, (std::set<int>{0, 1}));
    EXPECT_TRUE(c.complete);
  }
  EXPECT_EQ(cps[0].series, (std::vector<std::string>{"/case/processor<rank>/<step>/U",
                                                     "/case/processor<rank>/<step>/p"}));
}

TEST(CheckpointSteps, SerialProgramWithoutRankHasOneFilePerStep) {
  std::vector<StepFile> in = {file("/x/ckpt_10.dat", -1), file("/x/ckpt_5.dat", -1),
                              file("/x/restart.bin", -1)};
  auto cps = group_checkpoints(in);
  // Files with no step digits come first, as "-"; the latest complete is the last numbered.
  EXPECT_EQ(steps_of(cps), (std::vector<std::string>{"-", "5", "10"}));
  EXPECT_EQ(latest_complete(cps), 2);
}

TEST(CheckpointSteps, FilesRewrittenUnderOneNameAreOneCheckpoint) {
  std::vector<StepFile> in;
  for (int r = 0; r < 4; ++r) in.push_back(file("/c/restart_r" + std::to_string(r) + ".bin", r));
  auto cps = group_checkpoints(in);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].step, "-");
  EXPECT_EQ(cps[0].files.size(), 4u);
  EXPECT_EQ(latest_complete(cps), 0);
}

TEST(CheckpointSteps, EqualLabelsTieByNewestFile) {
  // Steps written with and without leading zeros name the same checkpoint.
  std::vector<StepFile> in = {file("/a/ck_040_r0", 0, 1, 5), file("/a/ck_40_r1", 1, 1, 7)};
  auto cps = group_checkpoints(in);
  EXPECT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].newest_mtime_ns, 7);
}

TEST(CheckpointSteps, StepMatchesIgnoresLeadingZerosOnly) {
  EXPECT_TRUE(step_matches("0040", "40"));
  EXPECT_TRUE(step_matches("40", "0040"));
  EXPECT_TRUE(step_matches("0.005", "0.005"));
  EXPECT_FALSE(step_matches("0.05", "0.5"));
  EXPECT_FALSE(step_matches("40", "4"));
  EXPECT_TRUE(step_matches("-", "-"));
}

TEST(CheckpointSteps, ContainerNodeFromForwarderNames) {
  EXPECT_EQ(container_node("c-node-01-1796052625499263859-0.ckc"), "node-01");
  EXPECT_EQ(container_node("c-vm-17-3.ckc"), "vm");
  EXPECT_EQ(container_node("other.ckc"), "");
  EXPECT_EQ(container_node("c-1-2.ckc"), "");
  EXPECT_EQ(container_node("c-n-1-2.txt"), "");
}

TEST(CheckpointSteps, DigitsOfTheRunDirectoryAreNoStep) {
  // A file rewritten under one name beside numbered steps, below a directory with digits.
  std::vector<StepFile> in = {file("/tmp/job.3x9/ckpt/extra.bin", -1)};
  for (int step : {1, 2})
    for (int r = 0; r < 2; ++r)
      in.push_back(
          file("/tmp/job.3x9/ckpt/step_" + std::to_string(step) + "/s." + std::to_string(r), r));
  EXPECT_EQ(steps_of(group_checkpoints(in, "/tmp/job.3x9/ckpt")),
            (std::vector<std::string>{"-", "1", "2"}));
  // Without the capture directory: the parent of the files' common directory.
  EXPECT_EQ(steps_of(group_checkpoints(in)), (std::vector<std::string>{"-", "1", "2"}));
  // A base the files are not below is not used.
  EXPECT_EQ(steps_of(group_checkpoints(in, "/elsewhere")),
            (std::vector<std::string>{"-", "1", "2"}));
}

TEST(CheckpointSteps, OtherNumberedFieldsAreFilesOfTheStepWithADoubt) {
  // ADIOS2 subfiles by aggregator ranks 0 and 4, AMReX levels: the step is the leftmost
  // number that differs; the others are files of it, and said.
  std::vector<StepFile> in;
  for (std::string st : {"0010", "0020"}) {
    in.push_back(file("/r/ckpt_" + st + ".bp/data.0", 0));
    in.push_back(file("/r/ckpt_" + st + ".bp/data.1", 4));
    in.push_back(file("/r/chk" + st + "/Level_0/Cell_D_00000", -1));
    in.push_back(file("/r/chk" + st + "/Level_1/Cell_D_00000", -1));
  }
  auto cps = group_checkpoints(in, "/r");
  ASSERT_EQ(steps_of(cps), (std::vector<std::string>{"0010", "0020"}));
  EXPECT_EQ(cps[1].files.size(), 4u);
  EXPECT_TRUE(cps[1].complete) << cps[1].missing;
  EXPECT_NE(cps[1].doubt, "") << "a second varying number is said";
  EXPECT_EQ(latest_complete(cps), 1);
}

TEST(CheckpointSteps, NamesReusedInTurnPutTheOrderInDoubt) {
  // poly.restart.1 (step 1000), .2 (2000), then .1 again (3000): .1 is the newest.
  std::vector<StepFile> in = {file("/r/poly.restart.1", -1, 10, 3000000000000),
                              file("/r/poly.restart.2", -1, 10, 2000000000000)};
  auto cps = group_checkpoints(in, "/r");
  ASSERT_EQ(steps_of(cps), (std::vector<std::string>{"1", "2"}));
  EXPECT_NE(cps[1].doubt, "") << "2 is older than 1: its number does not tell its age";
}

TEST(CheckpointSteps, AFileWrittenOnceJoinsTheStepOfItsDirectory) {
  // Day directories with rank files, and a diagnostics file of the last day only.
  std::vector<StepFile> in;
  for (int d : {28, 29, 30})
    for (int r = 0; r < 2; ++r)
      in.push_back(
          file("/r/2026-11-" + std::to_string(d) + "/rank" + std::to_string(r) + ".bin", r));
  in.push_back(file("/r/2026-11-30/diag.nc", 0));
  auto cps = group_checkpoints(in, "/r");
  ASSERT_EQ(steps_of(cps), (std::vector<std::string>{"28", "29", "30"}));
  EXPECT_EQ(cps[2].files.size(), 3u);
  EXPECT_EQ(latest_complete(cps), 2);
  // step_0000/meta.json of rank 0 beside the step's rank files: its 0000 is the step.
  std::vector<StepFile> zero;
  for (int step : {0, 10})
    for (int r = 0; r < 2; ++r)
      zero.push_back(file("/r/step_000" + std::to_string(step) + "/r" + std::to_string(r), r));
  zero.push_back(file("/r/step_0000/meta.json", 0));
  cps = group_checkpoints(zero, "/r");
  ASSERT_EQ(steps_of(cps), (std::vector<std::string>{"0000", "00010"}));
  EXPECT_EQ(cps[0].files.size(), 3u);
}

TEST(CheckpointSteps, AStepWithoutASeriesEveryEarlierStepHadIsIncomplete) {
  // Rank 0 writes header.json last: step 30 lost it in a crash.
  std::vector<StepFile> in;
  for (int step : {10, 20, 30}) {
    for (int r = 0; r < 4; ++r)
      in.push_back(file("/c/step_" + std::to_string(step) + "/r" + std::to_string(r) + ".h5", r));
    if (step != 30) in.push_back(file("/c/step_" + std::to_string(step) + "/header.json", 0));
  }
  auto cps = group_checkpoints(in, "/c");
  ASSERT_EQ(steps_of(cps), (std::vector<std::string>{"10", "20", "30"}));
  EXPECT_FALSE(cps[2].complete);
  EXPECT_EQ(cps[2].missing, "no file of /c/step_<step>/header.json");
  EXPECT_EQ(latest_complete(cps), 1);
}

TEST(CheckpointSteps, ANulInAPathIsNoPlaceholder) {
  std::vector<StepFile> in = {file(std::string("/r/a\0b_1", 8), 0), file("/r/a?b_2", 0)};
  auto cps = group_checkpoints(in, "/r");  // (ASan: no read past a skeleton)
  EXPECT_EQ(cps.size(), 2u);
}

TEST(CheckpointSteps, NoFilesNoCheckpoint) {
  EXPECT_TRUE(group_checkpoints({}).empty());
  EXPECT_EQ(latest_complete({}), -1);
}

}  // namespace
}  // namespace ckptfwd::cli
