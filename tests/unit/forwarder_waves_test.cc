// Batches follow checkpoint waves (src/forwarder/batching/batcher.h, waves.h): the files of one
// step closed by the node's ranks over more than a batch window land in one container; the
// waves_sealed / waves_split / split_rate stats count them.
#include <map>
#include <set>

#include "forwarder_test_util.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd::test {

using namespace std::chrono_literals;

class WavesTest : public ForwarderTest {
 protected:
  static constexpr int kRanks = 8;

  void SetUp() override {
    ForwarderTest::SetUp();
    cfg_.store = store();  // every step directory in one store: only waves separate them
  }

  // One connection per rank, introduced as that rank.
  void connect_ranks() {
    for (int r = 0; r < kRanks; ++r) {
      ranks_.push_back(client());
      ASSERT_EQ(ranks_.back()->call({"HELLO", std::to_string(1000 + r), std::to_string(r)})[0],
                "OK");
    }
  }

  std::string rank_path(int step, int r) {
    char name[64];
    snprintf(name, sizeof(name), "/ckpt/step_%04d/r%04d.h5", step, r);
    return data_ + name;
  }

  // Every rank writes its file of `step`, rank r closing it r * gap after the first.
  void write_step(int step, std::chrono::milliseconds gap, size_t bytes = 6000) {
    fs::create_directories(fs::path(rank_path(step, 0)).parent_path());
    std::vector<std::thread> th;
    for (int r = 0; r < kRanks; ++r)
      th.emplace_back([this, r, step, gap, bytes] {
        std::this_thread::sleep_for(gap * r);
        write_version(*ranks_[r], rank_path(step, r), payload(bytes, step * 100 + r));
      });
    for (auto& t : th) t.join();
  }

  // path -> container of every committed file (empty before the first commit).
  std::map<std::string, std::string> committed() {
    std::map<std::string, std::string> out;
    if (!fs::exists(store() + "/MANIFEST")) return out;
    Catalog cat;
    std::string err;
    EXPECT_TRUE(cat.load(store(), &err)) << err;
    for (auto& [p, e] : cat.entries()) out[p] = e.container;
    return out;
  }

  // Containers holding step's files, once all kRanks of them are committed (waits up to
  // `limit`; empty if they were not all committed by then).
  std::set<std::string> containers_of(int step, std::chrono::milliseconds limit) {
    auto end = std::chrono::steady_clock::now() + limit;
    do {
      auto c = committed();
      std::set<std::string> out;
      int n = 0;
      for (int r = 0; r < kRanks; ++r)
        if (auto it = c.find(rank_path(step, r)); it != c.end()) {
          out.insert(it->second);
          ++n;
        }
      if (n == kRanks) return out;
      std::this_thread::sleep_for(20ms);
    } while (std::chrono::steady_clock::now() < end);
    return {};
  }

  std::string stats_json() {
    auto js = ranks_[0]->call({"STATS"});
    return js.size() == 2 ? js[1] : "";
  }

  std::vector<std::unique_ptr<Client>> ranks_;
};

TEST_F(WavesTest, RanksClosingOverSecondsLandInOneContainerPerStep) {
  cfg_.batch_window_ms = 100;
  cfg_.wave_window_ms = 3000;
  start();
  connect_ranks();
  // 8 closes 180 ms apart: 1.26 s, each gap longer than the batch window, which alone
  // would have sealed up to 8 batches.
  auto t0 = std::chrono::steady_clock::now();
  write_step(40, 180ms);
  auto spread = std::chrono::steady_clock::now() - t0;
  EXPECT_GT(spread, 1s);
  // The first wave of the series does not know how many files to expect: it waits for the
  // wave window, so nothing is committed half a second after its last close.
  std::this_thread::sleep_for(500ms);
  EXPECT_TRUE(committed().empty());
  std::set<std::string> first = containers_of(40, 10s);
  ASSERT_EQ(first.size(), 1u) << "step 40 was split over several containers (or missing)";

  // The next step is expected to have 8 files: sealed once the 8th is closed and the batch
  // window is quiet, well before the 3 s wave window.
  write_step(50, 180ms);
  auto closed = std::chrono::steady_clock::now();
  std::set<std::string> second = containers_of(50, 10s);
  auto took = std::chrono::steady_clock::now() - closed;
  ASSERT_EQ(second.size(), 1u) << "step 50 was split over several containers (or missing)";
  EXPECT_NE(*second.begin(), *first.begin());
  EXPECT_LT(took, 2s) << "a complete wave waited for the wave window";
  EXPECT_EQ(committed().size(), 2u * kRanks);

  // The MANIFEST shows a commit a moment before the counters do: drain first.
  ASSERT_EQ(ranks_[0]->call({"DRAIN"})[0], "OK");
  std::string j = stats_json();
  EXPECT_NE(j.find("\"waves_sealed\":2"), std::string::npos) << j;
  EXPECT_NE(j.find("\"waves_split\":0"), std::string::npos) << j;
  EXPECT_NE(j.find("\"split_rate\":0.000"), std::string::npos) << j;
  EXPECT_NE(j.find("\"containers_written\":2"), std::string::npos) << j;
  for (int r = 0; r < kRanks; ++r)
    EXPECT_EQ(read_through(*ranks_[r], rank_path(50, r)), payload(6000, 5000 + r));
}

TEST_F(WavesTest, AWaveCutByBatchBytesCountsAsSplit) {
  cfg_.wave_window_ms = 3000;
  cfg_.batch_bytes = 20000;  // 3 files of 6000 bytes per batch
  start();
  connect_ranks();
  write_step(40, 0ms);
  ASSERT_EQ(ranks_[0]->call({"DRAIN"})[0], "OK");
  std::set<std::string> cs = containers_of(40, 5s);
  EXPECT_GE(cs.size(), 3u);
  std::string j = stats_json();
  EXPECT_NE(j.find("\"waves_sealed\":1"), std::string::npos) << j;
  EXPECT_NE(j.find("\"waves_split\":1"), std::string::npos) << j;
  EXPECT_NE(j.find("\"split_rate\":1.000"), std::string::npos) << j;
}

// CKPTFWD_GROUP_SIZE is how many ranks the pipeline merges together; it no longer bounds
// the files of a batch.
TEST_F(WavesTest, GroupSizeDoesNotBoundABatch) {
  cfg_.group_size = 2;
  cfg_.batch_window_ms = 5000;  // only the waiter seals
  cfg_.wave_window_ms = 5000;
  start();
  connect_ranks();
  write_step(40, 0ms);
  for (auto& c : ranks_) ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  EXPECT_EQ(containers_of(40, 5s).size(), 1u);
}

}  // namespace ckptfwd::fwd::test
