// The codec trials of a batch (trial_budget.h): the largest variables get their full trial
// before the batch is encoded while the budget lasts, the others a quick trial now and
// their full trial after the commit (CodecChoices::run_deferred), whose chains the next
// checkpoint takes. Every file reads back exact either way.
#include <cmath>
#include <numeric>

#include "forwarder/pipeline/trial_budget.h"
#include "forwarder_schema_batch.h"

namespace ckptfwd::fwd::test {

namespace {
constexpr uint64_t kSample = 1 << 20;

uint64_t cost_of(const std::vector<uint64_t>& sizes, const std::vector<bool>& now) {
  uint64_t c = 0;
  for (size_t i = 0; i < sizes.size(); ++i)
    c += now[i] ? trial_cost(sizes[i], kSample) : quick_cost(sizes[i]);
  return c;
}
}  // namespace

TEST(TrialBudget, ASmallBatchTriesEveryVariableInFull) {
  const std::vector<uint64_t> sizes = {64 << 10, 100 << 10, 8 << 10};
  const std::vector<bool> now = trials_now(sizes, 200 << 10, kSample);
  EXPECT_EQ(now, std::vector<bool>(3, true));
}

TEST(TrialBudget, TheLargestGoFirstAndTheCostStaysInTheShare) {
  // One 16 MiB variable and 30 of 256 KiB (23.5 MiB in all): every full trial would cost
  // 30 * 320 KiB + 704 KiB, about 43 % of the batch's encoding.
  std::vector<uint64_t> sizes(30, 256 << 10);
  sizes.insert(sizes.begin() + 17, 16 << 20);
  const uint64_t bytes = std::accumulate(sizes.begin(), sizes.end(), uint64_t{0});
  const std::vector<bool> now = trials_now(sizes, bytes, kSample);
  EXPECT_TRUE(now[17]) << "the largest variable is tried in full";
  const auto tried = std::count(now.begin(), now.end(), true);
  EXPECT_GT(tried, 1);
  EXPECT_LT(tried, 15);
  EXPECT_LE(cost_of(sizes, now), static_cast<uint64_t>(kTrialShare * static_cast<double>(bytes)));
  EXPECT_EQ(now, trials_now(sizes, bytes, kSample)) << "the same batch chooses the same";
}

TEST(TrialBudget, AVariableWhoseTrialPaysForItselfIsAlwaysTried) {
  // 400 variables of 64 KiB: their quick trials alone are over the budget.
  std::vector<uint64_t> sizes(400, 64 << 10);
  sizes.push_back(32 << 20);
  const uint64_t bytes = std::accumulate(sizes.begin(), sizes.end(), uint64_t{0});
  const std::vector<bool> now = trials_now(sizes, bytes, kSample);
  EXPECT_TRUE(now.back());
  EXPECT_EQ(std::count(now.begin(), now.end(), true), 1);
}

TEST(TrialBudget, AVariableOfAFewKiBGetsNoQuickTrial) {
  EXPECT_EQ(quick_block(2400), 0u);
  EXPECT_EQ(quick_cost(kQuickMinBytes - 1), 0u);
  EXPECT_GT(quick_block(kQuickMinBytes), 0u);
  EXPECT_GT(quick_cost(kQuickMinBytes), 0u);
}

TEST(TrialBudget, ASmallerVariableMayTakeWhatALargerOneLeft) {
  // A budget of 1 MiB (the least), 192 KiB of it for the quick trials: the 1 MiB
  // variable's full trial (704 KiB) fits, the next 1 MiB one would not, a 64 KiB one
  // (224 KiB) still does.
  const std::vector<uint64_t> sizes = {1 << 20, 1 << 20, 64 << 10};
  const std::vector<bool> now = trials_now(sizes, 0, kSample);
  EXPECT_EQ(now, (std::vector<bool>{true, false, true}));
}

namespace {
// One rank's checkpoint of kVars small smooth fields and one large one.
constexpr int kVars = 48, kSmall = 2048, kLarge = 1 << 20;
std::string checkpoint(int rank) {
  std::string s;
  for (int v = 0; v < kVars; ++v)
    for (int i = 0; i < kSmall; ++i)
      put<double>(s, std::sin(0.002 * (i + rank * kSmall) * (v + 1)) * (100.0 + v));
  for (int i = 0; i < kLarge; ++i) put<double>(s, std::cos(0.0001 * (i + rank * kLarge)) * 7.0);
  return s;
}

std::string schema() {
  std::string s = "file \"*/rank_*.bin\" little_endian\n";
  for (int v = 0; v < kVars; ++v)
    s += "  float64 f" + std::to_string(v) + "[" + std::to_string(kSmall) + "]\n";
  s += "  float64 big[" + std::to_string(kLarge) + "]\n";
  return s;
}
}  // namespace

class BatchTrials : public SchemaBatchTest {
 protected:
  void SetUp() override {
    SchemaBatchTest::SetUp();
    use_schema(schema().c_str());
    for (int rank = 0; rank < 2; ++rank) {
      const std::string bytes = checkpoint(rank);
      files_.push_back(stage(rank + 1, "staged" + std::to_string(rank),
                             data_ + "/rank_" + std::to_string(rank) + ".bin", rank, bytes));
      contents_.push_back(bytes);
    }
    cfg_.scheme = "aware";
  }
  std::vector<BatchFile> files_;
  std::vector<std::string> contents_;
};

// The first checkpoint of 49 variables (48 of 32 KiB, one of 16 MiB over both ranks)
// tries in full only what fits in its budget, and the rest after its commit; the next
// checkpoint takes every variable's tuned chain without a trial.
TEST_F(BatchTrials, TheFirstCheckpointDefersTheTrialsBeyondItsBudget) {
  CodecChoices choices;
  BatchResult res;
  std::string err;
  ASSERT_TRUE(write_container(job(nullptr, &choices), files_, res, &err)) << err;
  const auto typed = std::count_if(res.streams.begin(), res.streams.end(),
                                   [](const StreamReport& s) { return s.dtype == "F64LE"; });
  ASSERT_EQ(typed, kVars + 1);
  EXPECT_GT(res.trial_cpu_ns, 0);
  const size_t tried_first = choices.size();
  EXPECT_GE(tried_first, 1u) << "the large variable is tried before the batch";
  EXPECT_LT(tried_first, size_t{kVars} / 2) << "most small ones wait for the commit";
  for (const StreamReport& s : res.streams) {
    if (s.dtype != "F64LE") continue;
    EXPECT_LT(s.stored, s.raw) << s.key << " " << s.chain;
  }
  std::vector<std::string> got = read_back(res.container);
  ASSERT_EQ(got.size(), contents_.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i] == contents_[i]) << i;

  EXPECT_TRUE(choices.run_deferred());
  EXPECT_EQ(choices.size(), size_t{kVars + 1}) << "every variable has its own chain now";
  // (as the batcher does after run_deferred) the next job takes them all from CHAINS and
  // its first checkpoint runs no trial
  ASSERT_TRUE(choices.remember(store(), &err)) << err;
  CodecChoices next_job;
  BatchResult next_job_first;
  ASSERT_TRUE(write_container(job(nullptr, &next_job), files_, next_job_first, &err)) << err;
  EXPECT_EQ(next_job_first.trial_cpu_ns, 0);
  EXPECT_EQ(next_job.size(), size_t{kVars + 1});
  BatchResult next;
  ASSERT_TRUE(write_container(job(nullptr, &choices), files_, next, &err)) << err;
  EXPECT_EQ(next.trial_cpu_ns, 0) << "the next checkpoint runs no trial";
  EXPECT_FALSE(choices.run_deferred());
  got = read_back(next.container);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i] == contents_[i]) << i;
}

}  // namespace ckptfwd::fwd::test
