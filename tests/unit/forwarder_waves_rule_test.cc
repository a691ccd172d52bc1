// The checkpoint wave rule (src/forwarder/batching/waves.h): which closed versions are one wave.
#include <gtest/gtest.h>

#include "forwarder/batching/waves.h"

namespace ckptfwd::fwd::test {

using namespace std::chrono_literals;
using T = Waves::Clock;

TEST(WavePattern, RankDigitsAreAbstractedStepDigitsKept) {
  EXPECT_EQ(wave_pattern("/s/ckpt/step_0040/r0003.h5", 3), "/s/ckpt/step_0040/r<rank>.h5");
  EXPECT_EQ(wave_pattern("/s/ckpt/step_0040/r0011.h5", 11), "/s/ckpt/step_0040/r<rank>.h5");
  EXPECT_EQ(wave_pattern("/s/ckpt/step_0050/r0011.h5", 11), "/s/ckpt/step_0050/r<rank>.h5");
  // Whichever run equals the rank, the job and step numbers kept.
  EXPECT_EQ(wave_pattern("/s/run7/ckpt_r12_s300.bin", 12), "/s/run7/ckpt_r<rank>_s300.bin");
  // A name without digits has no rank field: it is grouped by close time.
  EXPECT_EQ(wave_pattern("/s/ckpt/restart.dat", 0), "/s/ckpt/restart.dat");
  // Several runs equal the rank, or the rank is unknown or not in the name: left to the
  // file of another rank (the run in which the two differ).
  EXPECT_EQ(wave_pattern("/s/step_3/r3.h5", 3), "/s/step_<?>/r<?>.h5");
  EXPECT_EQ(wave_pattern("/s/step_4/r3.h5", -1), "/s/step_<?>/r<?>.h<?>");
  EXPECT_EQ(wave_pattern("/s/ckpt/restart.h5", 0), "/s/ckpt/restart.h<?>");
}

TEST(WavePattern, SplitDigitsKeepsTheTextBetweenRuns) {
  DigitSplit d = split_digits("/a1/b22c/0");
  ASSERT_EQ(d.runs, (std::vector<std::string>{"1", "22", "0"}));
  EXPECT_EQ(d.skeleton, std::string("/a\0/b\0c/\0", 9));
  EXPECT_EQ(rank_candidates(d, 22), std::vector<size_t>{1});
  EXPECT_EQ(rank_candidates(d, 0), std::vector<size_t>{2});
  EXPECT_EQ(rank_candidates(d, 5), (std::vector<size_t>{0, 1, 2}));  // not in the name
  EXPECT_EQ(rank_candidates(split_digits("/x/r00000000000000000003"), 3), std::vector<size_t>{0});
}

TEST(Waves, RanksOfOneStepAreOneWaveTheNextStepAnother) {
  Waves w;
  auto t = T::now();
  uint64_t a = w.add("S", "/c/step_0040/r0003.h5", 3, t);
  EXPECT_EQ(w.add("S", "/c/step_0040/r0011.h5", 11, t + 1s), a);
  EXPECT_EQ(w.add("S", "/c/step_0040/r0000.h5", 0, t + 2s), a);
  uint64_t b = w.add("S", "/c/step_0050/r0003.h5", 3, t + 3s);
  EXPECT_NE(b, a);
  // Other stores, other names and other file kinds of the same step are other waves.
  EXPECT_NE(w.add("S2", "/c/step_0040/r0005.h5", 5, t), a);
  EXPECT_NE(w.add("S", "/c/step_0040/r0005.meta", 5, t), a);
  EXPECT_EQ(w.find(a)->paths.size(), 3u);
  EXPECT_EQ(w.find(a)->last_close, t + 2s);
  EXPECT_TRUE(w.accepts(a, "S", "/c/step_0040/r0007.h5", 7));
  EXPECT_FALSE(w.accepts(a, "S", "/c/step_0050/r0007.h5", 7));
}

TEST(Waves, UnknownRankTheRunThatDiffersIsTheRankField) {
  Waves w;
  auto t = T::now();
  uint64_t a = w.add("S", "/c/step_4/r3.h5", -1, t);
  EXPECT_EQ(w.find(a)->field, -1);  // either run could be the rank
  EXPECT_EQ(w.add("S", "/c/step_4/r5.h5", -1, t), a);
  EXPECT_EQ(w.find(a)->field, 1);
  EXPECT_NE(w.add("S", "/c/step_5/r3.h5", -1, t), a);  // now the step is fixed
  // With the rank in the name one file decides the field: that rank's next step is not a
  // member, though the two paths differ in one run only.
  Waves v;
  uint64_t b = v.add("S", "/c/step_4/r3.h5", 3, t);
  EXPECT_NE(v.add("S", "/c/step_5/r3.h5", 3, t), b);
}

TEST(Waves, ARankThatEqualsAnotherRunStillJoins) {
  // Files numbered from 1: rank 0 writes f0001, rank 1 f0002, no run equals the rank.
  Waves w;
  auto t = T::now();
  uint64_t a = w.add("S", "/c/step_0040/f0001.h5", 0, t);
  EXPECT_EQ(w.add("S", "/c/step_0040/f0002.h5", 1, t), a);
  EXPECT_EQ(w.find(a)->field, 1);
  // Rank 40's only equal run is the step, not its file: it joins all the same.
  EXPECT_EQ(w.add("S", "/c/step_0040/f0041.h5", 40, t), a);
  EXPECT_EQ(w.find(a)->paths.size(), 3u);
}

TEST(Waves, NamesWithoutDigitsAreOneTimeWavePerStore) {
  Waves w;
  auto t = T::now();
  uint64_t a = w.add("S", "/c/restart", 0, t);
  EXPECT_TRUE(w.find(a)->time);
  EXPECT_EQ(w.add("S", "/c/other.dat", 1, t + 1s), a);
  EXPECT_NE(w.add("S", "/c/r1.dat", 1, t + 1s), a);
  EXPECT_NE(w.add("T", "/c/other.dat", 1, t + 1s), a);
  EXPECT_EQ(w.find(a)->last_close, t + 1s);
  EXPECT_TRUE(w.seal(a, true).first);
  EXPECT_EQ(w.find(a), nullptr);  // nothing to learn from it
  EXPECT_NE(w.add("S", "/c/restart", 0, t + 9s), a);
}

TEST(Waves, ThePreviousWaveTellsHowManyToExpect) {
  Waves w;
  auto t = T::now();
  uint64_t a = 0;
  for (int r = 0; r < 4; ++r) a = w.add("S", "/c/s10/r" + std::to_string(r), r, t);
  EXPECT_EQ(w.expected(*w.find(a)), 0u);  // the first wave of a series: unknown
  uint64_t b = w.add("S", "/c/s20/r0", 0, t);
  auto r = w.seal(a, true);
  EXPECT_TRUE(r.first);
  EXPECT_FALSE(r.split);
  EXPECT_EQ(w.expected(*w.find(b)), 4u);  // learned even though b opened before a sealed
  EXPECT_EQ(w.open_count(), 1u);
}

// Rank 0's file of the next step alone, in a directory whose name has a 0 too: two runs
// could be its rank field, and the one with a family of sealed waves tells.
TEST(Waves, AnUndecidedRankFieldExpectsWhatItsOneFamilyHad) {
  Waves w;
  auto t = T::now();
  uint64_t a = w.add("S", "/run0/s1_r0", 0, t);
  EXPECT_EQ(w.find(a)->field, -1);  // "0" of run0 or of r0
  EXPECT_EQ(w.add("S", "/run0/s1_r1", 1, t), a);
  EXPECT_EQ(w.add("S", "/run0/s1_r2", 2, t), a);
  EXPECT_EQ(w.find(a)->field, 2);  // decided by the second file
  w.seal(a, true);
  uint64_t b = w.add("S", "/run0/s2_r0", 0, t);
  EXPECT_EQ(w.find(b)->field, -1);
  EXPECT_EQ(w.expected(*w.find(b)), 3u);
  // Two series whose rank fields are different runs: a file either could take is
  // expected to have nothing (unknown).
  Waves v;
  uint64_t d = v.add("S", "/r0/s1_x0", 0, t);
  EXPECT_EQ(v.add("S", "/r1/s1_x0", 1, t), d);  // field: the run of r0
  v.seal(d, true);
  uint64_t e = v.add("S", "/r0/s1_x1", 1, t);  // field: the run of x1 (rank 1)
  EXPECT_EQ(v.add("S", "/r0/s1_x2", 2, t), e);
  v.seal(e, true);
  uint64_t f = v.add("S", "/r0/s2_x0", 0, t);  // both 0 runs could be the field
  EXPECT_EQ(v.find(f)->field, -1);
  EXPECT_EQ(v.expected(*v.find(f)), 0u);
}

TEST(Waves, SplitsAreCountedOncePerWave) {
  Waves w;
  auto t = T::now();
  uint64_t a = w.add("S", "/c/s10/r0", 0, t);
  w.add("S", "/c/s10/r1", 1, t);
  auto r = w.seal(a, false);  // a batch cut it (batch_bytes)
  EXPECT_TRUE(r.first);
  EXPECT_TRUE(r.split);
  EXPECT_TRUE(w.find(a)->sealed);  // its rest is due at once
  EXPECT_FALSE(w.seal(a, true).first);
  // A late rank of the same step reopens it: still one wave, already counted as split.
  EXPECT_EQ(w.add("S", "/c/s10/r2", 2, t + 5s), a);
  r = w.seal(a, true);
  EXPECT_FALSE(r.first);
  EXPECT_FALSE(r.split);
  // A wave sealed whole and then reopened by a late rank is a split.
  uint64_t b = w.add("S", "/c/s20/r0", 0, t);
  EXPECT_FALSE(w.seal(b, true).split);
  EXPECT_EQ(w.add("S", "/c/s20/r1", 1, t + 5s), b);
  r = w.seal(b, true);
  EXPECT_FALSE(r.first);
  EXPECT_TRUE(r.split);
}

TEST(Waves, TheNextRankReopensASealedWaveWhoseRankFieldWasUndecided) {
  // Rank 0 under /run0: two runs equal its rank. Its wave was sealed alone (the window).
  Waves w;
  auto t = T::now();
  uint64_t a = w.add("S", "/run0/s0040_r0000", 0, t);
  EXPECT_EQ(w.find(a)->field, -1);
  EXPECT_TRUE(w.seal(a, true).first);
  ASSERT_NE(w.find(a), nullptr);
  EXPECT_EQ(w.add("S", "/run0/s0050_r0000", 0, t + 1s), a + 1);  // not another rank
  EXPECT_EQ(w.add("S", "/run0/s0040_r0001", 1, t + 1s), a);
  EXPECT_EQ(w.find(a)->field, 2);
  auto r = w.seal(a, true);
  EXPECT_FALSE(r.first);
  EXPECT_TRUE(r.split);
}

TEST(Waves, OpenWavesWithoutMembersAreForgotten) {
  Waves w;
  uint64_t a = w.add("S", "/c/s10/r0", 0, T::now());
  uint64_t b = w.add("S", "/c/s20/r0", 0, T::now());
  w.retain_open({b});
  EXPECT_EQ(w.find(a), nullptr);
  EXPECT_NE(w.find(b), nullptr);
}

}  // namespace ckptfwd::fwd::test
