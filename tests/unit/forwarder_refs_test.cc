// Reference chunks written by the forwarder (chunk_index.h): a batch whose variable did not
// change since an earlier container stores that variable's chunks as references to it;
// every file of both batches restores exactly; CKPTFWD_KEEP keeps a referenced container
// while a kept one refers to it, and deletes it once nothing does.

#include <cmath>

#include "codec/codec.h"
#include "forwarder/pipeline/chunk_index.h"
#include "forwarder/pipeline/pipeline.h"
#include "forwarder_schema_batch.h"
#include "store/container/container.h"
#include "store/container/variable_map.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd::test {
namespace {

// One rank's checkpoint of step `step`: the temperature changes every step, the grid never.
std::string checkpoint(int rank, int step, int n) {
  std::string s = "CKPT0001";
  put<int32_t>(s, n);
  for (int i = 0; i < n; ++i) put<double>(s, std::sin(0.01 * (i + rank * n) + step) * 300.0);
  // A mesh with irregular spacing: its bytes compress poorly, as real coordinates do.
  uint64_t x = 0x9e3779b97f4a7c15ull * (rank + 1);
  for (int i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    put<double>(s, i + static_cast<double>(x >> 11) / 9007199254740992.0);
  }
  return s;
}

const char* kSchema =
    "file \"*/rank_*.bin\" little_endian\n"
    "  char magic[8]\n"
    "  int32 n\n"
    "  float64 temperature[n]\n"
    "  float64 grid[n]\n";

class ChunkRefs : public SchemaBatchTest {
 protected:
  void SetUp() override {
    SchemaBatchTest::SetUp();
    cfg_.chunk_bytes = 16384;
    use_schema(kSchema);
  }

  // The files of one step, written as one batch (refs: what its chunks may refer to).
  BatchResult write_step(int step, const ChunkIndex* refs, std::vector<std::string>& contents) {
    std::vector<BatchFile> files;
    contents.clear();
    for (int rank = 0; rank < 4; ++rank) {
      std::string bytes = checkpoint(rank, step, 8192);
      files.push_back(
          stage(static_cast<uint64_t>(step * 10 + rank + 1),
                "s" + std::to_string(step) + "_" + std::to_string(rank),
                data_ + "/step" + std::to_string(step) + "/rank_" + std::to_string(rank) + ".bin",
                rank, bytes));
      contents.push_back(bytes);
    }
    BatchResult res;
    std::string err;
    EXPECT_TRUE(write_container(job(refs), files, res, &err)) << err;
    return res;
  }

  void expect_restores(const std::string& container, const std::vector<std::string>& contents) {
    std::vector<std::string> got = read_back(container);
    ASSERT_EQ(got.size(), contents.size());
    for (size_t i = 0; i < contents.size(); ++i)
      EXPECT_TRUE(got[i] == contents[i]) << container << " " << i;
  }
};

TEST_F(ChunkRefs, UnchangedVariableIsStoredAsReferences) {
  std::vector<std::string> first, second;
  BatchResult r1 = write_step(1, nullptr, first);
  EXPECT_EQ(r1.referenced_bytes, 0u);
  ChunkIndexCache cache;
  auto index = cache.index_for(store(), {{r1.container, r1.identity}});
  ASSERT_FALSE(index->empty());
  BatchResult r2 = write_step(2, index.get(), second);
  // The grid of every rank (4 x 64 KiB) is unchanged: all of it is referred to.
  EXPECT_EQ(r2.referenced_bytes, 4u * 8192 * 8);
  EXPECT_LT(r2.bytes_stored * 3, r1.bytes_stored * 2) << r1.bytes_stored << " " << r2.bytes_stored;
  ContainerReader r;
  std::string err;
  ASSERT_TRUE(r.open(store() + "/" + r2.container, &err)) << err;
  size_t grid_chunks = 0;
  for (const StreamInfo& s : r.streams())
    for (const ChunkInfo& c : s.chunks) {
      bool ref = c.codec == static_cast<uint8_t>(CodecId::kRef);
      if (s.key.find("grid") != std::string::npos) {
        EXPECT_TRUE(ref) << s.key;
        ++grid_chunks;
      } else {
        EXPECT_FALSE(ref) << s.key << ": changed, so stored";
      }
    }
  EXPECT_GT(grid_chunks, 0u);
  std::set<std::string> targets;
  ASSERT_TRUE(r.referenced_containers(targets, &err)) << err;
  EXPECT_EQ(targets, std::set<std::string>{r1.container});
  expect_restores(r1.container, first);
  expect_restores(r2.container, second);

  // A third step refers to the original chunks (depth 1), not to the second container.
  std::vector<std::string> third;
  auto index2 = cache.index_for(store(), {{r2.container, r2.identity}});
  BatchResult r3 = write_step(3, index2.get(), third);
  EXPECT_EQ(r3.referenced_bytes, 4u * 8192 * 8);
  ContainerReader r3r;
  ASSERT_TRUE(r3r.open(store() + "/" + r3.container, &err)) << err;
  targets.clear();
  ASSERT_TRUE(r3r.referenced_containers(targets, &err)) << err;
  EXPECT_EQ(targets, std::set<std::string>{r1.container});
  expect_restores(r3.container, third);
}

TEST(ChunkIndexKeys, GroupSuffixIsDropped) {
  EXPECT_EQ(ungrouped_key("grid_F64LE_Array1D@g3"), "grid_F64LE_Array1D");
  EXPECT_EQ(ungrouped_key("residual@g12"), "residual");
  EXPECT_EQ(ungrouped_key("a@gx"), "a@gx");
  EXPECT_EQ(ungrouped_key("agnostic"), "agnostic");
  EXPECT_EQ(grouped_key("t_F32LE_Array1D", 0), "t_F32LE_Array1D");
  EXPECT_EQ(ungrouped_key(grouped_key("t_F32LE_Array1D", 4)), "t_F32LE_Array1D");
}

size_t container_files(const std::string& store) {
  size_t n = 0;
  for (auto& e : fs::directory_iterator(store)) n += e.path().extension() == ".ckc";
  return n;
}

TEST_F(ForwarderTest, KeepOneKeepsAReferencedContainerWhileItIsReferred) {
  cfg_.keep = 1;
  start();
  auto c = client();
  // b never changes until step 3; both are whole chunks (4096 bytes each), so b's chunks
  // are the same whatever order the batch lays the files out in.
  std::string b = payload(3 * 4096, 77);
  for (int step = 0; step < 2; ++step) {
    write_version(*c, data_ + "/a", payload(2 * 4096, 10 + step));
    write_version(*c, data_ + "/b", b);
    ASSERT_EQ(c->call({"DRAIN"})[0], "OK");  // one batch per step
  }
  // Step 0's container holds no kept version, but step 1's refers to its chunks of b.
  EXPECT_EQ(container_files(store()), 2u) << read_file(store() + "/MANIFEST");
  EXPECT_EQ(read_through(*c, data_ + "/b"), b);
  auto js = c->call({"STATS"});
  EXPECT_NE(js[1].find("\"bytes_referenced\":12288"), std::string::npos) << js[1];
  // Everything in the store checks (references resolved).
  for (auto& e : fs::directory_iterator(store())) {
    if (e.path().extension() != ".ckc") continue;
    ContainerReader r;
    std::string err;
    ASSERT_TRUE(r.open(e.path().string(), &err)) << err;
    std::vector<std::string> problems;
    EXPECT_TRUE(r.verify(problems)) << problems[0];
  }
  // b changes: nothing refers to step 0's container any more; both older ones go.
  std::string b2 = payload(3 * 4096, 78), a2 = payload(2 * 4096, 99);
  write_version(*c, data_ + "/a", a2);
  write_version(*c, data_ + "/b", b2);
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(container_files(store()), 1u) << read_file(store() + "/MANIFEST");
  EXPECT_EQ(read_through(*c, data_ + "/b"), b2);
  EXPECT_EQ(read_through(*c, data_ + "/a"), a2);
  Catalog cat;
  std::string err;
  ASSERT_TRUE(cat.load(store(), &err)) << err;
  EXPECT_TRUE(cat.problems().empty());
  EXPECT_EQ(cat.containers().size(), 1u);
}

}  // namespace
}  // namespace ckptfwd::fwd::test
