// Lossy only where opted in (docs/internals.md, "Lossy compression, opt-in"): bytes of a variable
// that is not opted in are given back exactly even when they equal bytes of one that is, in the
// same file or in another rank's file of the batch (the merge plan's duplicate check,
// merge_plan.h), and in a later container (reference chunks, chunk_index.h). The opted-in
// variable itself stays within its bound.

#include <cmath>
#include <cstring>

#include "codec/codec.h"
#include "forwarder/pipeline/chunk_index.h"
#include "forwarder/pipeline/merge_plan.h"
#include "forwarder/pipeline/pipeline.h"
#include "forwarder_schema_batch.h"
#include "store/container/container.h"

namespace ckptfwd::fwd::test {
namespace {

constexpr int64_t kN = 32768;  // values per array: 256 KiB, many chunks and dedup pieces

// n values whose fractional parts a 0.5 bound changes (a step of about 1).
std::string field(int seed) {
  std::string s;
  for (int64_t i = 0; i < kN; ++i)
    put<double>(s, std::sin(0.001 * static_cast<double>(i) + seed) * 1000.0 + 0.37 * seed);
  return s;
}

// `int64 n; float64 T[n]; float64 P[n]` with the given arrays.
std::string checkpoint(const std::string& t, const std::string& p) {
  std::string s;
  put<int64_t>(s, kN);
  return s + t + p;
}

const char* kSchema =
    "file \"*/rank_*.bin\" little_endian\n"
    "  int64 n\n"
    "  float64 T[n]\n"
    "  float64 P[n]\n";

constexpr double kBound = 0.5;
constexpr size_t kT = 8, kP = kT + 8 * kN;  // offsets of T and P

class LossyExact : public SchemaBatchTest {
 protected:
  void SetUp() override {
    SchemaBatchTest::SetUp();
    cfg_.scheme = "auto";
    cfg_.chunk_bytes = 65536;
    cfg_.codec_min_mbps = 0;  // what is chosen must not depend on the build's speed
    cfg_.lossy = "T_*=abs:0.5";
    use_schema(kSchema);
  }

  // The files of one batch (rank i: contents[i]), written as one container.
  BatchResult write_batch(const std::string& dir, const std::vector<std::string>& contents,
                          const ChunkIndex* refs = nullptr) {
    std::vector<BatchFile> files;
    for (size_t rank = 0; rank < contents.size(); ++rank)
      files.push_back(stage(next_vid_++, "staged_" + dir + std::to_string(rank),
                            data_ + "/" + dir + "/rank_" + std::to_string(rank) + ".bin",
                            static_cast<int>(rank), contents[rank]));
    BatchResult res;
    std::string err;
    EXPECT_TRUE(write_container(job(refs), files, res, &err)) << err;
    return res;
  }

  // T restored within its bound (and some value changed: it was stored lossy), P and n
  // byte for byte.
  static void expect_only_t_lossy(const std::string& in, const std::string& got, size_t* t_changed,
                                  const std::string& what) {
    ASSERT_EQ(got.size(), in.size()) << what;
    EXPECT_EQ(memcmp(got.data(), in.data(), kT), 0) << what << ": n changed";
    size_t p_wrong = 0;
    double p_err = 0;
    for (int64_t k = 0; k < kN; ++k) {
      double a, b, c, d;
      memcpy(&a, in.data() + kT + 8 * k, 8);
      memcpy(&b, got.data() + kT + 8 * k, 8);
      ASSERT_LE(std::fabs(a - b), kBound) << what << ": T value " << k;
      *t_changed += a != b;
      memcpy(&c, in.data() + kP + 8 * k, 8);
      memcpy(&d, got.data() + kP + 8 * k, 8);
      p_wrong += memcmp(&c, &d, 8) != 0;
      p_err = std::max(p_err, std::fabs(c - d));
    }
    EXPECT_EQ(p_wrong, 0u) << what << ": P (not opted in) restored lossy in " << p_wrong << " of "
                           << kN << " values, max error " << p_err;
  }

  uint64_t next_vid_ = 1;
};

}  // namespace

TEST_F(LossyExact, ExactVariableEqualToLossyOneInTheSameFileIsExact) {
  const std::string t = field(1);
  const std::vector<std::string> in = {checkpoint(t, t)};  // P holds T's bytes
  BatchResult res = write_batch("one", in);
  std::vector<std::string> got = read_back(res.container);
  ASSERT_EQ(got.size(), 1u);
  size_t t_changed = 0;
  expect_only_t_lossy(in[0], got[0], &t_changed, "rank 0");
  EXPECT_GT(t_changed, 0u) << "T (opted in) was stored exactly: the test shows nothing";
}

TEST_F(LossyExact, ExactVariableEqualToAnotherRanksLossyOneIsExact) {
  // Rank 1's P holds rank 0's T; rank 0's P holds rank 1's T (each placed before or after
  // the lossy bytes it equals).
  const std::string t0 = field(1), t1 = field(2);
  const std::vector<std::string> in = {checkpoint(t0, t1), checkpoint(t1, t0)};
  for (int group : {0, 1}) {  // one merge group, and one per rank (other streams, same job)
    cfg_.group_size = group;
    BatchResult res = write_batch("g" + std::to_string(group), in);
    std::vector<std::string> got = read_back(res.container);
    ASSERT_EQ(got.size(), 2u);
    size_t t_changed = 0;
    for (size_t r = 0; r < 2; ++r)
      expect_only_t_lossy(in[r], got[r], &t_changed,
                          "group size " + std::to_string(group) + " rank " + std::to_string(r));
    EXPECT_GT(t_changed, 0u) << "T (opted in) was stored exactly: the test shows nothing";
  }
}

TEST_F(LossyExact, LaterBytesReferToALossyChunkOnlyWhereTheyEqualWhatItGivesBack) {
  // Container 1: T lossy. Container 2, nothing opted in any more, references to container
  // 1's chunks allowed: rank 0 writes back T as restored (a restart that did not change
  // it: its chunks equal what container 1's give back, and may refer to them), rank 1 T as
  // first written (container 1's chunks of T hold other bytes: never referred to), and both
  // P the bytes first written.
  const std::string t = field(3);
  BatchResult r1 = write_batch("step1", {checkpoint(t, field(4))});
  const std::string restored_t = read_back(r1.container).at(0).substr(kT, 8 * kN);
  ASSERT_NE(restored_t, t) << "T (opted in) was stored exactly: the test shows nothing";
  ChunkIndexCache cache;
  auto index = cache.index_for(store(), {{r1.container, r1.identity}});
  ASSERT_FALSE(index->empty());
  cfg_.lossy.clear();
  const std::vector<std::string> in = {checkpoint(restored_t, t), checkpoint(t, t)};
  BatchResult r2 = write_batch("step2", in, index.get());
  std::vector<std::string> got = read_back(r2.container);
  ASSERT_EQ(got.size(), 2u);
  for (size_t r = 0; r < 2; ++r)
    EXPECT_TRUE(got[r] == in[r]) << "rank " << r << " of container 2 is not restored exactly";
  EXPECT_EQ(r2.referenced_bytes, static_cast<uint64_t>(8 * kN)) << "rank 0's T only";
}

namespace {
// One file `n, T, P` (P holding T's bytes) as a merge input, with its variable map.
struct PlanInput {
  std::string bytes = checkpoint(field(1), field(1));
  VariableMap vars;
  MergeInput in;
  PlanInput() {
    for (auto [name, off] : {std::pair{"T", kT}, std::pair{"P", kP}}) {
      Variable v;
      v.key = std::string(name) + "_F64LE_Array1D";
      v.name = name;
      v.dtype = "F64LE";
      v.elem_size = 8;
      v.shape = {kN};
      v.extents.push_back(VarExtent{off, 8 * kN, {0}, {kN}, false});
      vars.vars.push_back(v);
    }
    vars.source = "schema";
    in.base = reinterpret_cast<const uint8_t*>(bytes.data());
    in.size = bytes.size();
    in.rank = 0;
    in.vars = &vars;
    in.commit = {{0, bytes.size()}};
    in.mergeable = true;
  }
};

size_t stream_of(const MergePlan& plan, const std::string& var_key) {
  for (size_t s = 0; s < plan.streams.size(); ++s)
    if (plan.streams[s].var_key == var_key) return s;
  return plan.streams.size();
}
}  // namespace

TEST(LossyPlan, OnlyAnOptedInVariablesOwnBytesGoToItsStream) {
  PlanInput f;
  MergeOptions opt;
  opt.may_be_lossy = [](const std::string& key, const std::string&) { return key[0] == 'T'; };
  MergePlan plan;
  std::string err;
  ASSERT_TRUE(plan_merge({f.in}, opt, plan, &err)) << err;
  const size_t t = stream_of(plan, "T_F64LE_Array1D"), p = stream_of(plan, "P_F64LE_Array1D");
  ASSERT_LT(t, plan.streams.size());
  ASSERT_LT(p, plan.streams.size()) << "P was pointed at T's bytes instead of stored";
  EXPECT_TRUE(plan.streams[t].may_be_lossy);
  EXPECT_FALSE(plan.streams[p].may_be_lossy);
  for (const FileRange& r : plan.ranges[0])
    EXPECT_TRUE(r.file_off < kP || r.stream == p) << "P's bytes at " << r.file_off;
  std::vector<bool> lossy(plan.streams.size(), false);
  lossy[t] = true;
  EXPECT_TRUE(lossy_streams_misread({f.in}, plan, lossy).empty());
}

TEST(LossyPlan, TheCheckBeforeLossyChainsFindsOtherBytesInALossyStream) {
  // Without may_be_lossy the planner may point P at T's equal bytes (every stream gives back
  // exactly what it holds then): a lossy chain on T's stream must be refused.
  PlanInput f;
  MergePlan plan;
  std::string err;
  ASSERT_TRUE(plan_merge({f.in}, MergeOptions{}, plan, &err)) << err;
  const size_t t = stream_of(plan, "T_F64LE_Array1D");
  ASSERT_LT(t, plan.streams.size());
  ASSERT_GT(plan.dedup_bytes, 0u) << "P was not deduplicated: the check is not exercised";
  std::vector<bool> lossy(plan.streams.size(), false);
  lossy[t] = true;
  auto misread = lossy_streams_misread({f.in}, plan, lossy);
  ASSERT_EQ(misread.size(), 1u);
  EXPECT_EQ(misread.begin()->first, t);
  EXPECT_NE(misread.begin()->second.find("not its variable T_F64LE_Array1D"), std::string::npos)
      << misread.begin()->second;
}

}  // namespace ckptfwd::fwd::test
