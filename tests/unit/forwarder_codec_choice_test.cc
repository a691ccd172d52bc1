// CodecChoices (codec_choice.h). An fsync does not wait for a codec trial (pipeline.cc):
// the stream's sample is kept (defer) and tried after the commit (run_deferred), so the
// variable's next checkpoint gets the tuned chain. Chains are remembered across jobs in the
// store's CHAINS file (chain_memory.h): a new job's CodecChoices takes the chains an earlier
// job chose, without trials; lossy chains are not kept; a garbled, foreign or planted file
// costs only trials.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "forwarder/pipeline/chain_memory.h"
#include "forwarder/pipeline/codec_choice.h"

namespace ckptfwd::fwd::test {

namespace {
std::vector<uint8_t> smooth_doubles(size_t n) {
  std::vector<uint8_t> out(n * sizeof(double));
  for (size_t i = 0; i < n; ++i) {
    double v = 300.0 + 20.0 * std::sin(static_cast<double>(i) * 0.001);
    memcpy(out.data() + i * sizeof(double), &v, sizeof v);
  }
  return out;
}

PlannedStream typed_stream(const std::vector<uint8_t>& bytes, const std::string& var) {
  PlannedStream s;
  s.key = s.var_key = var;
  s.layout.dtype = "F64LE";
  s.layout.inner = {256};
  s.typed = true;
  s.bytes.add(bytes.data(), bytes.size());
  return s;
}

namespace fs = std::filesystem;
struct TempStore {
  std::string dir;
  TempStore() {
    char tmpl[] = "/tmp/ckf-chains-XXXXXX";
    dir = mkdtemp(tmpl);
  }
  ~TempStore() { fs::remove_all(dir); }
};
}  // namespace

TEST(CodecDefer, DeferredTrialRunsLaterAndIsRemembered) {
  std::vector<uint8_t> bytes = smooth_doubles(256 * 512);
  CodecChoices choices;
  codec::SelectOptions opt;
  PlannedStream s = typed_stream(bytes, "fields/T");
  EXPECT_FALSE(choices.chosen(s, opt));
  choices.defer(s, opt);
  EXPECT_FALSE(choices.chosen(s, opt)) << "defer runs no trial";
  // The batch's memory is reused after it (noise now): the trial must see the copy.
  uint64_t x = 88172645463325252ull;
  for (uint8_t& b : bytes) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<uint8_t>(x);
  }
  EXPECT_TRUE(choices.run_deferred());
  std::optional<codec::Chain> c = choices.chosen(s, opt);
  ASSERT_TRUE(c);
  EXPECT_GT(c->sample_ratio, 1.5) << c->name << ": tried on the smooth sample, not on the noise";
  EXPECT_FALSE(choices.run_deferred()) << "nothing left to try";
  EXPECT_EQ(choices.size(), 1u);
}

// Several streams of one variable (its pieces in several merge groups) wait for one
// trial: on the largest one's sample, whichever is deferred first.
TEST(CodecDefer, TheLargestStreamOfAVariableIsTheOneTried) {
  std::vector<uint8_t> smooth = smooth_doubles(256 * 64), noise(256 * 512 * sizeof(double));
  uint64_t x = 88172645463325252ull;
  for (uint8_t& b : noise) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<uint8_t>(x);
  }
  for (bool small_first : {true, false}) {
    CodecChoices choices;
    codec::SelectOptions opt;
    PlannedStream small = typed_stream(smooth, "fields/T"), large = typed_stream(noise, "fields/T");
    choices.defer(small_first ? small : large, opt);
    choices.defer(small_first ? large : small, opt);
    EXPECT_TRUE(choices.run_deferred());
    std::optional<codec::Chain> c = choices.chosen(small, opt);
    ASSERT_TRUE(c);
    EXPECT_LT(c->sample_ratio, 1.1) << c->name << ": tried on the noise, the larger stream";
  }
}

// The batcher's sync lane runs only a few deferred trials (max_bytes of samples), the
// largest stream's first; the others stay for the next call.
TEST(CodecDefer, RunDeferredStopsAtItsBytes) {
  std::vector<uint8_t> a = smooth_doubles(256 * 16), b = smooth_doubles(256 * 32),
                       c = smooth_doubles(256 * 8);
  CodecChoices choices;
  codec::SelectOptions opt;
  const PlannedStream sa = typed_stream(a, "fields/a"), sb = typed_stream(b, "fields/b"),
                      sc = typed_stream(c, "fields/c");
  for (const PlannedStream* s : {&sa, &sb, &sc}) choices.defer(*s, opt);
  EXPECT_TRUE(choices.run_deferred(1));
  EXPECT_TRUE(choices.chosen(sb, opt)) << "the largest first";
  EXPECT_EQ(choices.size(), 1u);
  EXPECT_TRUE(choices.run_deferred(a.size()));
  EXPECT_TRUE(choices.chosen(sa, opt));
  EXPECT_EQ(choices.size(), 2u) << "a's sample alone fills the bytes";
  EXPECT_TRUE(choices.run_deferred());
  EXPECT_EQ(choices.size(), 3u);
  EXPECT_FALSE(choices.run_deferred());
}

TEST(CodecDefer, AChosenVariableIsNotDeferredAgain) {
  std::vector<uint8_t> bytes = smooth_doubles(256 * 64);
  CodecChoices choices;
  codec::SelectOptions opt;
  PlannedStream s = typed_stream(bytes, "fields/c");
  codec::Chain first = choices.choose(s, opt);
  choices.defer(s, opt);
  EXPECT_FALSE(choices.run_deferred());
  ASSERT_TRUE(choices.chosen(s, opt));
  EXPECT_EQ(choices.chosen(s, opt)->name, first.name);
}

TEST(ChainMemory, ANewJobTakesTheChainsAnEarlierJobChose) {
  TempStore store;
  std::vector<uint8_t> bytes = smooth_doubles(256 * 256);
  PlannedStream t = typed_stream(bytes, "fields/T");
  codec::SelectOptions opt;
  codec::SelectOptions lossy = opt;
  lossy.lossy = codec::LossyBound{0.01, 0};
  CodecChoices job1;
  const codec::Chain chosen = job1.choose(t, opt);
  job1.choose(typed_stream(bytes, "fields/Q"), lossy);
  std::string err;
  ASSERT_TRUE(job1.remember(store.dir, &err)) << err;

  CodecChoices job2;
  EXPECT_FALSE(job2.chosen(t, opt));
  EXPECT_EQ(job2.recall(store.dir), 1u) << "the lossless chain only";
  std::optional<codec::Chain> got = job2.chosen(t, opt);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->name, chosen.name);
  EXPECT_EQ(got->spec, chosen.spec);
  EXPECT_FALSE(job2.chosen(typed_stream(bytes, "fields/Q"), lossy)) << "a lossy chain was kept";
  EXPECT_EQ(job2.recall(store.dir), 0u) << "a store is read once per job";
  // Nothing new chosen: the file is not written again.
  const auto before = fs::last_write_time(store.dir + "/CHAINS");
  ASSERT_TRUE(job2.remember(store.dir, &err));
  EXPECT_EQ(fs::last_write_time(store.dir + "/CHAINS"), before);
}

TEST(ChainMemory, GarbledPlantedOrForeignFilesCostOnlyTrials) {
  TempStore store;
  const std::string path = store.dir + "/CHAINS";
  {
    std::ofstream f(path);
    f << "ckptfwd-chains 1\n"
      << "zz\t0101\n"             // not hex
      << "6b6579\t01ff0103\n"     // 255 steps: more than a chain has
      << "6b6579\n"               // no spec
      << "6b657932\t01000103\n";  // a valid spec: no steps, zstd, level 3
  }
  CodecChoices job;
  EXPECT_EQ(job.recall(store.dir), 1u);
  {
    std::ofstream f(path);
    f << "another format\n6b6579\t01000103\n";
  }
  CodecChoices other;
  EXPECT_EQ(other.recall(store.dir), 0u);
  // A symbolic link planted under the name is not followed.
  fs::remove(path);
  const std::string elsewhere = store.dir + "/elsewhere";
  {
    std::ofstream f(elsewhere);
    f << "ckptfwd-chains 1\n6b6579\t01000103\n";
  }
  fs::create_symlink(elsewhere, path);
  CodecChoices linked;
  EXPECT_EQ(linked.recall(store.dir), 0u);
  EXPECT_TRUE(chain_memory::load(store.dir + "/missing").empty());
}

}  // namespace ckptfwd::fwd::test
