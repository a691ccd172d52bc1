// An fsync does not wait for a codec trial (pipeline.cc): the stream's sample is kept
// (CodecChoices::defer) and tried after the commit (run_deferred), so the variable's next
// checkpoint gets the tuned chain.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

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

}  // namespace ckptfwd::fwd::test
