// fsync of an open version commits a snapshot that is a second name of its staged file
// (no copy): SYNC returns only once the bytes are on the store, later writes form a later
// version, a writer running during the fsync yields bytes of the fsync's time or later
// and loses nothing, and an fsync without changes since the last one commits nothing.
// Every test runs twice: the snapshot read into the forwarder's memory (files up to
// Config.snapshot_read_max, with warm memory kept for them: warm_memory.h) and read in
// place from the staged file (larger ones, or without warm memory: in_place.h); the
// in-place checks have tests of their own (FsyncInPlaceTest).
#include <sys/mman.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "forwarder/staging/warm_memory.h"
#include "forwarder_store_check.h"

namespace ckptfwd::fwd::test {

namespace {
size_t container_count(const std::string& store) {
  size_t n = 0;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(store, ec))
    if (e.path().extension() == ".ckc") ++n;
  return n;
}
// Warm memory (warm_memory.h) for snapshots of every size up to 8 MiB, under a cap of
// cap bytes: each size from 4 KiB to 8 MiB fits one region of a power of two.
void keep_warm_memory(uint64_t cap) {
  warm::drop_all();
  warm::set_cap(cap);
  std::vector<uint64_t> sizes;
  for (uint64_t n = 4096; n <= (8u << 20); n *= 2) sizes.push_back(n);
  warm::prepare_now(sizes);
}
// Two ranks' files of one checkpoint, r0.bin and r1.bin, each opened for writing by a
// client of its own (OPEN replies ra, rb).
struct TwoRanks {
  std::unique_ptr<Client> a, b;
  std::string pa, pb;
  std::vector<std::string> ra, rb;
  TwoRanks(const std::string& socket, const std::string& dir, const char* name_a = "r0.bin",
           const char* name_b = "r1.bin")
      : a(std::make_unique<Client>(socket)),
        b(std::make_unique<Client>(socket)),
        pa(dir + "/" + name_a),
        pb(dir + "/" + name_b) {
    ra = a->call({"OPEN", pa, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
    rb = b->call({"OPEN", pb, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
  }
  bool opened() const { return ra.size() == 5 && ra[0] == "OK" && rb.size() == 5 && rb[0] == "OK"; }
  // Both fsync'd, the second started by the first's snapshot; the first snapshot takes
  // 50 ms to make and the second second_ms, so the second is still being made when the
  // first is ready (one batch; with second_ms > 50, the first is first in it).
  // The SYNC replies; *snapshots: how many were made.
  std::pair<std::string, std::string> sync_overlapping(int* snapshots, int second_ms = 50) {
    std::thread second;
    std::atomic<int> made{0};
    std::string second_reply;
    test_hooks().during_snapshot = [&] {
      const bool first = made++ == 0;
      if (first) second = std::thread([&] { second_reply = b->call({"SYNC", rb[1]})[0]; });
      std::this_thread::sleep_for(std::chrono::milliseconds(first ? 50 : second_ms));
    };
    std::string first_reply = a->call({"SYNC", ra[1]})[0];
    if (second.joinable()) second.join();
    test_hooks().during_snapshot = nullptr;
    *snapshots = made.load();
    return {first_reply, second_reply};
  }
};
}  // namespace

class FsyncLiveTest : public ForwarderTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    ForwarderTest::SetUp();
    // Nothing but the fsync itself may seal a batch in these tests.
    cfg_.batch_window_ms = 60000;
    cfg_.wave_window_ms = 60000;
    if (GetParam())
      cfg_.snapshot_read_max = 0;  // every snapshot read in place
    else
      keep_warm_memory(cfg_.snapshot_read_max);
  }
  // Both ranks of t write 1 MiB (payload seed and seed + 1) and fsync overlapping
  // (TwoRanks::sync_overlapping); both files restore exactly. Returns the containers on
  // the store.
  size_t fsync_both(TwoRanks& t, uint32_t seed) {
    const std::string da = payload(1 << 20, seed), db = payload(1 << 20, seed + 1);
    write_file(t.ra[2], da);
    write_file(t.rb[2], db);
    int snapshots = 0;
    EXPECT_EQ(t.sync_overlapping(&snapshots), (std::pair<std::string, std::string>{"OK", "OK"}));
    EXPECT_EQ(snapshots, 2);
    const size_t containers = container_count(store());
    EXPECT_EQ(on_store(store(), t.pa, root_ + "/restored"), da);
    EXPECT_EQ(on_store(store(), t.pb, root_ + "/restored"), db);
    return containers;
  }
};

INSTANTIATE_TEST_SUITE_P(Snapshot, FsyncLiveTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "InPlace" : "ReadIntoMemory";
                         });

TEST_P(FsyncLiveTest, SyncReturnsWithTheBytesOnTheStore) {
  start();
  auto c = client();
  std::string p = data_ + "/ck.bin", a = payload(3 << 20, 7);
  auto r = c->call({"OPEN", p, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
  ASSERT_EQ(r[0], "OK");
  write_file(r[2], a);
  ASSERT_EQ(c->call({"SYNC", r[1]})[0], "OK");
  EXPECT_EQ(on_store(store(), p, root_ + "/restored"), a);
  EXPECT_EQ(stat_of(*c, "fsync_in_place"), GetParam() ? 1 : 0);
  // The snapshot was no copy: only the open version's staged file holds the bytes.
  ASSERT_EQ(c->call({"CLOSE", r[1], std::to_string(a.size())})[0], "OK");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(stat_of(*c, "files_committed"), 1) << "closed unchanged: not committed again";
  EXPECT_EQ(read_through(*c, p), a);
}

TEST_P(FsyncLiveTest, WritesAfterSyncFormALaterVersion) {
  start();
  auto c = client();
  std::string p = data_ + "/ck.bin", a = payload(1 << 20, 1), b = payload(300000, 2);
  auto r = c->call({"OPEN", p, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
  ASSERT_EQ(r[0], "OK");
  int fd = ::open(r[2].c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, a.data(), a.size()), static_cast<ssize_t>(a.size()));
  ASSERT_EQ(c->call({"SYNC", r[1]})[0], "OK");
  ASSERT_EQ(::pwrite(fd, b.data(), b.size(), 1000), static_cast<ssize_t>(b.size()));
  ASSERT_EQ(::write(fd, b.data(), b.size()), static_cast<ssize_t>(b.size()));  // appended
  ::close(fd);
  std::string later = a;
  later.replace(1000, b.size(), b);
  later += b;
  EXPECT_EQ(on_store(store(), p, root_ + "/restored"), a) << "the fsync's bytes, not later ones";
  ASSERT_EQ(c->call({"CLOSE", r[1], std::to_string(later.size())})[0], "OK");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(on_store(store(), p, root_ + "/restored"), later);
  EXPECT_EQ(read_through(*c, p), later);
  EXPECT_EQ(stat_of(*c, "files_committed"), 2);
}

TEST_P(FsyncLiveTest, SyncWithoutChangesSinceTheLastOneCommitsNothing) {
  start();
  auto c = client();
  std::string p = data_ + "/ck.bin", a = payload(500000, 4);
  // On the store before (so the version below is a plain rewrite, committed whole).
  write_version(*c, p, "first");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  ASSERT_EQ(stat_of(*c, "files_committed"), 1);
  auto r = c->call({"OPEN", p, std::to_string(O_WRONLY | O_TRUNC), "644"});
  ASSERT_EQ(r[0], "OK");
  write_file(r[2], a);
  ASSERT_EQ(c->call({"SYNC", r[1]})[0], "OK");
  ASSERT_EQ(c->call({"SYNC", r[1]})[0], "OK");
  ASSERT_EQ(c->call({"SYNC", r[1]})[0], "OK");
  EXPECT_EQ(container_count(store()), 2u);
  EXPECT_EQ(stat_of(*c, "files_committed"), 2);
  EXPECT_EQ(on_store(store(), p, root_ + "/restored"), a);
  // A change after them: the next fsync commits it, and one more without a change does not.
  std::string b = payload(500000, 5);
  write_file(r[2], b);
  ASSERT_EQ(c->call({"SYNC", r[1]})[0], "OK");
  ASSERT_EQ(c->call({"SYNC", r[1]})[0], "OK");
  EXPECT_EQ(stat_of(*c, "files_committed"), 3);
  EXPECT_EQ(on_store(store(), p, root_ + "/restored"), b);
  ASSERT_EQ(c->call({"CLOSE", r[1], std::to_string(b.size())})[0], "OK");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(stat_of(*c, "files_committed"), 3) << "closed unchanged: not committed again";
  EXPECT_EQ(read_through(*c, p), b);
}

// A thread rewrites every block of the file with a rising generation number while the
// fsync runs. The committed snapshot must restore (its hash matches its bytes), every
// word of it must be of a generation at least the last one completed before the fsync,
// and the close must commit the last generation whole.
TEST_P(FsyncLiveTest, WriterDuringSyncGivesFsyncTimeOrLaterBytes) {
  start();
  auto c = client();
  std::string p = data_ + "/ck.bin";
  constexpr size_t kBlock = 64 * 1024, kBlocks = 96;
  auto r = c->call({"OPEN", p, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
  ASSERT_EQ(r[0], "OK");
  int fd = ::open(r[2].c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  auto write_generation = [&](uint64_t gen) {
    std::vector<uint64_t> block(kBlock / 8, gen);
    for (size_t k = 0; k < kBlocks; ++k)
      if (::pwrite(fd, block.data(), kBlock, static_cast<off_t>(k * kBlock)) !=
          static_cast<ssize_t>(kBlock))
        return false;
    return true;
  };
  ASSERT_TRUE(write_generation(1));
  std::atomic<uint64_t> completed{1};
  std::atomic<bool> stop{false}, failed{false};
  std::thread writer([&] {
    for (uint64_t gen = 2; !stop.load(); ++gen) {
      if (!write_generation(gen)) failed = true;
      completed = gen;
    }
  });
  while (completed.load() < 3) std::this_thread::yield();  // the writer is at work
  uint64_t before = completed.load();
  std::string sync_reply = c->call({"SYNC", r[1]})[0];
  stop = true;
  writer.join();
  uint64_t last = completed.load();
  ::close(fd);
  ASSERT_FALSE(failed.load());
  ASSERT_EQ(sync_reply, "OK");
  std::string snap = on_store(store(), p, root_ + "/restored");
  ASSERT_EQ(snap.size(), kBlock * kBlocks) << snap.substr(0, 200);
  for (size_t w = 0; w < snap.size() / 8; ++w) {
    uint64_t g;
    memcpy(&g, snap.data() + w * 8, 8);
    ASSERT_GE(g, before) << "word " << w << " is older than the fsync";
    ASSERT_LE(g, last) << "word " << w << " was never written";
  }
  ASSERT_EQ(c->call({"CLOSE", r[1], std::to_string(kBlock * kBlocks)})[0], "OK");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  std::string fin = on_store(store(), p, root_ + "/restored");
  ASSERT_EQ(fin.size(), kBlock * kBlocks);
  std::string want(kBlock * kBlocks, '\0');
  for (size_t w = 0; w < want.size() / 8; ++w) memcpy(want.data() + w * 8, &last, 8);
  EXPECT_TRUE(fin == want) << "the close committed the last generation whole";
}

}  // namespace ckptfwd::fwd::test

namespace ckptfwd::fwd::test {

// The open version is dropped (its path unlinked by another process, its staged file
// purged) while an fsync takes its snapshot: the fsync succeeds with nothing to make durable, as if
// the unlink had come first, and the unlinked path does not come back on the store.
TEST_P(FsyncLiveTest, AnUnlinkDuringTheSnapshotLeavesNothingAndNoError) {
  fwd_ = std::make_unique<Forwarder>(cfg_, paths_, timing_);
  std::string err;
  ASSERT_EQ(fwd_->start(&err), Forwarder::Start::kReady) << err;
  thread_ = std::thread([this] { rc_ = fwd_->run(); });
  auto c = client();
  auto other = client();
  std::string p = data_ + "/gone.bin", a = payload(1 << 20, 3);
  auto r = c->call({"OPEN", p, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
  ASSERT_EQ(r[0], "OK");
  write_file(r[2], a);
  int unlinks = 0;
  test_hooks().during_snapshot = [&] {
    ++unlinks;
    EXPECT_EQ(other->call({"UNLINK", p})[0], "OK");
    ::unlink(r[2].c_str());  // the dropped version's staged file purged at once
  };
  EXPECT_EQ(c->call({"SYNC", r[1]})[0], "OK");
  test_hooks().during_snapshot = nullptr;
  EXPECT_EQ(unlinks, 1);
  c->call({"CLOSE", r[1], std::to_string(a.size())});
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(on_store(store(), p, root_ + "/restored"), "<not on the store>");
  EXPECT_EQ(stat_of(*c, "errors"), 0);
}

// Two ranks fsync at the same time and the second's snapshot is still being made (a copy
// of a large file takes a while) when the first's is ready: the batcher waits for it, and
// both land in one container instead of the second queueing behind the first's batch.
TEST_P(FsyncLiveTest, FsyncsWhoseSnapshotsOverlapShareOneContainer) {
  start();
  TwoRanks t(paths_.socket, data_);
  ASSERT_TRUE(t.opened());
  EXPECT_EQ(fsync_both(t, 1), 1u) << "one batch for both fsyncs";
}

// CKPTFWD_BATCH_BYTES does not cut the fsyncs of one checkpoint wave apart (its ranks
// return together), but still cuts between waves: two 1 MiB files with a 1 MiB limit.
TEST_P(FsyncLiveTest, TheFsyncsOfOneWaveShareOneContainerPastTheBatchBytes) {
  cfg_.batch_bytes = 1 << 20;
  start();
  TwoRanks t(paths_.socket, data_);  // r0.bin and r1.bin: one wave
  ASSERT_TRUE(t.opened());
  EXPECT_EQ(fsync_both(t, 1), 1u) << "one batch for the wave";
}

TEST_P(FsyncLiveTest, TheBatchBytesStillCutBetweenWaves) {
  cfg_.batch_bytes = 1 << 20;
  start();
  TwoRanks t(paths_.socket, data_, "mesh.bin", "state_0001_r0.bin");  // two waves
  ASSERT_TRUE(t.opened());
  EXPECT_EQ(fsync_both(t, 3), 2u) << "a batch a wave";
}

// The snapshots of one batch are read into the forwarder's memory up to
// Config.snapshot_read_max bytes in all: of two 1 MiB files fsync'd into one batch with a
// 1.5 MiB budget, one is read into memory and the other in place; both restore exactly.
TEST_F(ForwarderTest, SnapshotsOfOneBatchShareOneReadBudget) {
  cfg_.batch_window_ms = 60000;
  cfg_.wave_window_ms = 60000;
  cfg_.snapshot_read_max = 3 << 19;
  keep_warm_memory(16u << 20);  // warm memory for both: the budget alone decides
  start();
  TwoRanks t(paths_.socket, data_);
  ASSERT_TRUE(t.opened());
  std::string da = payload(1 << 20, 5), db = payload(1 << 20, 6);
  write_file(t.ra[2], da);
  write_file(t.rb[2], db);
  int snapshots = 0;
  EXPECT_EQ(t.sync_overlapping(&snapshots), (std::pair<std::string, std::string>{"OK", "OK"}));
  EXPECT_EQ(container_count(store()), 1u) << "one batch for both fsyncs";
  EXPECT_EQ(stat_of(*t.a, "fsync_in_place"), 1) << "both snapshots were read into memory";
  EXPECT_TRUE(on_store(store(), t.pa, root_ + "/restored") == da);
  EXPECT_TRUE(on_store(store(), t.pb, root_ + "/restored") == db);
}

// A snapshot without warm memory of its size is read in place (fresh pages cost more than
// that), and memory of its size is made warm after its fsync, so that the next fsync of a
// file of that size reads it privately.
TEST_F(ForwarderTest, AnFsyncWithoutWarmMemoryIsReadInPlaceAndWarmsMemoryForTheNext) {
  cfg_.batch_window_ms = 60000;
  cfg_.wave_window_ms = 60000;
  start();
  warm::drop_all();
  auto c = client();
  std::vector<std::string> paths, bytes;
  for (int i = 0; i < 2; ++i) {
    paths.push_back(data_ + "/f" + std::to_string(i) + ".bin");
    bytes.push_back(payload(1 << 20, 20 + i));
    auto r = c->call({"OPEN", paths[i], std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
    ASSERT_EQ(r[0], "OK");
    write_file(r[2], bytes[i]);
    ASSERT_EQ(c->call({"SYNC", r[1]})[0], "OK");
    EXPECT_EQ(stat_of(*c, "fsync_in_place"), 1) << "fsync " << i;
    if (i == 0) {
      for (int w = 0; w < 1000 && (warm::preparing() || warm::kept_bytes() == 0); ++w)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      EXPECT_EQ(warm::kept_bytes(), 1u << 20) << "warm memory of the file's size";
    }
  }
  EXPECT_EQ(warm::kept_bytes(), 1u << 20) << "the second fsync's memory kept again";
  for (int i = 0; i < 2; ++i)
    EXPECT_TRUE(on_store(store(), paths[i], root_ + "/restored") == bytes[i]) << paths[i];
}

// ... except a snapshot a writer maps shared and writable: that one is read into memory
// whatever the budget (a change made and undone through the mapping could escape the
// in-place checks).
TEST_F(ForwarderTest, ASnapshotMappedWritableIsReadIntoMemoryPastTheBudget) {
  cfg_.batch_window_ms = 60000;
  cfg_.wave_window_ms = 60000;
  cfg_.snapshot_read_max = 3 << 19;  // one of the two 1 MiB files
  // Warm memory for both: the budget and the mapping alone decide.
  keep_warm_memory(16u << 20);
  start();
  TwoRanks t(paths_.socket, data_);
  ASSERT_TRUE(t.opened());
  std::string da = payload(1 << 20, 7), db = payload(1 << 20, 8);
  write_file(t.ra[2], da);
  write_file(t.rb[2], db);
  int fd = ::open(t.rb[2].c_str(), O_RDWR);  // this process is the writer of both
  ASSERT_GE(fd, 0);
  void* map = ::mmap(nullptr, db.size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(map, MAP_FAILED);
  int snapshots = 0;
  EXPECT_EQ(t.sync_overlapping(&snapshots, 100),  // r0.bin takes the budget
            (std::pair<std::string, std::string>{"OK", "OK"}));
  ::munmap(map, db.size());
  EXPECT_EQ(container_count(store()), 1u) << "one batch for both fsyncs";
  EXPECT_EQ(stat_of(*t.a, "fsync_in_place"), 0);
  EXPECT_EQ(stat_of(*t.a, "fsync_copies"), 0) << "r1.bin read in place, seen mapped, copied";
  EXPECT_TRUE(on_store(store(), t.pa, root_ + "/restored") == da);
  EXPECT_TRUE(on_store(store(), t.pb, root_ + "/restored") == db);
}

// Two ranks write their files of one checkpoint; the first fsyncs while the second is
// still writing, and fsyncs 20 ms later: the first fsync's batch waits for it (the
// second's file is of the same wave, open and not fsync'd), and both land in one
// container instead of the second queueing behind the first's batch.
TEST_P(FsyncLiveTest, AnFsyncWaitsForARankOfItsWaveStillWriting) {
  start();
  TwoRanks t(paths_.socket, data_);
  ASSERT_TRUE(t.opened());
  std::string da = payload(1 << 20, 3), db = payload(1 << 20, 4);
  write_file(t.ra[2], da);
  std::string first_reply;
  std::thread first([&] { first_reply = t.a->call({"SYNC", t.ra[1]})[0]; });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  write_file(t.rb[2], db);
  EXPECT_EQ(t.b->call({"SYNC", t.rb[1]})[0], "OK");
  first.join();
  EXPECT_EQ(first_reply, "OK");
  EXPECT_EQ(container_count(store()), 1u) << "one batch for both fsyncs";
  EXPECT_EQ(on_store(store(), t.pa, root_ + "/restored"), da);
  EXPECT_EQ(on_store(store(), t.pb, root_ + "/restored"), db);
}

// The next checkpoint of the same two ranks, where the second rank opens its file only
// after the first's fsync is ready (a few ms behind, as ranks of an MPI job are): the
// wave's last checkpoint had two files, so the batch waits for the second (within the
// gather) and each checkpoint is one container.
TEST_P(FsyncLiveTest, AnFsyncWaitsForARankOfItsWaveThatHasNotOpenedYet) {
  start();
  auto a = client(), b = client();
  ASSERT_EQ(a->call({"HELLO", "1001", "0"})[0], "OK");
  ASSERT_EQ(b->call({"HELLO", "1002", "1"})[0], "OK");
  const auto open = [&](Client& c, const std::string& p) {
    return c.call({"OPEN", p, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
  };
  std::map<std::string, std::string> written;
  for (int step = 1; step <= 2; ++step) {
    const std::string pa = data_ + "/s" + std::to_string(step) + "_r0.bin";
    const std::string pb = data_ + "/s" + std::to_string(step) + "_r1.bin";
    written[pa] = payload(1 << 20, 10 * step);
    written[pb] = payload(1 << 20, 10 * step + 1);
    auto ra = open(*a, pa);
    ASSERT_EQ(ra[0], "OK");
    write_file(ra[2], written[pa]);
    // Step 1: rank 1 is writing when rank 0 fsyncs; step 2: it has not opened yet.
    std::vector<std::string> rb;
    if (step == 1) rb = open(*b, pb);
    std::string first_reply;
    std::thread first([&] { first_reply = a->call({"SYNC", ra[1]})[0]; });
    // Rank 0's fsync has its snapshot and waits for the commit before rank 1 opens (in
    // step 2): the batcher then sees rank 0 ready and no other file of the wave.
    const auto rank0_waits = [&] {
      std::lock_guard g(fwd_->core().state.mu);
      return fwd_->core().state.sync_waiting > 0;
    };
    for (int i = 0; i < 5000 && !rank0_waits(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (step == 2) rb = open(*b, pb);
    ASSERT_EQ(rb[0], "OK");
    write_file(rb[2], written[pb]);
    EXPECT_EQ(b->call({"SYNC", rb[1]})[0], "OK");
    first.join();
    EXPECT_EQ(first_reply, "OK");
    EXPECT_EQ(container_count(store()), static_cast<size_t>(step)) << "one batch a step";
    a->call({"CLOSE", ra[1], std::to_string(written[pa].size())});
    b->call({"CLOSE", rb[1], std::to_string(written[pb].size())});
  }
  for (const auto& [p, bytes] : written)
    EXPECT_EQ(on_store(store(), p, root_ + "/restored"), bytes) << p;
}

}  // namespace ckptfwd::fwd::test

namespace ckptfwd::fwd::test {

// A snapshot read in place (larger than Config.snapshot_read_max) whose file changes while
// the pipeline reads it, each way the application could change it: the change is seen,
// the file copied and the copy committed, so what the store holds restores to its hash
// (on_store checks it) with the bytes of after the change.
class FsyncInPlaceTest : public ForwarderTest {
 protected:
  void SetUp() override {
    ForwarderTest::SetUp();
    cfg_.batch_window_ms = 60000;
    cfg_.wave_window_ms = 60000;
    cfg_.snapshot_read_max = 1 << 20;
    path_ = data_ + "/big.bin";
    fwd_ = std::make_unique<Forwarder>(cfg_, paths_, timing_);
    std::string err;
    ASSERT_EQ(fwd_->start(&err), Forwarder::Start::kReady) << err;
    thread_ = std::thread([this] { rc_ = fwd_->run(); });
    c_ = client();
    r_ = c_->call({"OPEN", path_, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
    ASSERT_EQ(r_[0], "OK");
    write_file(r_[2], bytes_);
  }
  void TearDown() override {
    test_hooks().after_in_place_encode = nullptr;
    ForwarderTest::TearDown();
  }
  // SYNC with change() run on the staged file between its encoding and the checks (the
  // file is one window of the checks' walk: it is encoded whole first).
  std::string sync_changing(std::function<void(const std::string&)> change) {
    int calls = 0;
    test_hooks().after_in_place_encode = [&](const std::string& staged) {
      if (calls++ == 0) change(staged);  // the first attempt only
    };
    std::string reply = c_->call({"SYNC", r_[1]})[0];
    test_hooks().after_in_place_encode = nullptr;
    EXPECT_GE(calls, 1) << "the snapshot was not read in place";
    return reply;
  }
  std::unique_ptr<Client> c_;
  std::vector<std::string> r_;
  // Whether the store restores path_ to `want` (without printing MiBs when it does not).
  ::testing::AssertionResult stored(const std::string& want) {
    std::string got = on_store(store(), path_, root_ + "/restored");
    if (got == want) return ::testing::AssertionSuccess();
    size_t at = 0;
    while (at < got.size() && at < want.size() && got[at] == want[at]) ++at;
    return ::testing::AssertionFailure()
           << "the store holds " << got.size() << " bytes (" << got.substr(0, 40) << "...), want "
           << want.size() << "; first difference at " << at;
  }
  std::string path_, bytes_ = payload(3 << 20, 9);
};

TEST_F(FsyncInPlaceTest, AnUnchangedFileIsCommittedWithoutACopy) {
  ASSERT_EQ(sync_changing([](const std::string&) {}), "OK");
  EXPECT_TRUE(stored(bytes_));
  EXPECT_EQ(stat_of(*c_, "fsync_in_place"), 1);
  EXPECT_EQ(stat_of(*c_, "fsync_copies"), 0);
}

TEST_F(FsyncInPlaceTest, AWriteWhileItIsReadIsSeen) {
  std::string x(5000, 'x');
  ASSERT_EQ(sync_changing([&](const std::string& staged) {
              int fd = ::open(staged.c_str(), O_WRONLY);
              ASSERT_GE(fd, 0);
              ASSERT_EQ(::pwrite(fd, x.data(), x.size(), 100000), static_cast<ssize_t>(x.size()));
              ::close(fd);
            }),
            "OK");
  std::string want = bytes_;
  want.replace(100000, x.size(), x);
  EXPECT_TRUE(stored(want));
  EXPECT_EQ(stat_of(*c_, "fsync_in_place"), 0);
  EXPECT_EQ(stat_of(*c_, "fsync_copies"), 1);
}

// Through a shared mapping made and dropped while it is read: neither inotify nor the
// maps see it; the chunks read again do.
TEST_F(FsyncInPlaceTest, AWriteThroughAMappingWhileItIsReadIsSeen) {
  ASSERT_EQ(sync_changing([&](const std::string& staged) {
              int fd = ::open(staged.c_str(), O_RDWR);
              ASSERT_GE(fd, 0);
              void* p = mmap(nullptr, bytes_.size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
              ::close(fd);
              ASSERT_NE(p, MAP_FAILED);
              static_cast<char*>(p)[2000000] ^= 0x55;
              munmap(p, bytes_.size());
            }),
            "OK");
  std::string want = bytes_;
  want[2000000] ^= 0x55;
  EXPECT_TRUE(stored(want));
  EXPECT_EQ(stat_of(*c_, "fsync_copies"), 1);
}

// Cut below the forwarder's mapping: its reads of the lost pages fault (SIGBUS), which
// must not kill it.
TEST_F(FsyncInPlaceTest, ATruncationWhileItIsReadIsSeen) {
  const size_t keep = 1000000;
  ASSERT_EQ(sync_changing(
                [&](const std::string& staged) { ASSERT_EQ(::truncate(staged.c_str(), keep), 0); }),
            "OK");
  EXPECT_TRUE(stored(bytes_.substr(0, keep)));
  EXPECT_EQ(stat_of(*c_, "fsync_copies"), 1);
}

// A writer (this process is the client) maps the file shared and writable at the fsync:
// its writes could not be seen, so the snapshot is a copy from the start.
TEST_F(FsyncInPlaceTest, AFileAWriterMapsWritableIsCopied) {
  int fd = ::open(r_[2].c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  void* p = mmap(nullptr, bytes_.size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(p, MAP_FAILED);
  int calls = 0;
  test_hooks().after_in_place_encode = [&](const std::string&) { ++calls; };
  EXPECT_EQ(c_->call({"SYNC", r_[1]})[0], "OK");
  munmap(p, bytes_.size());
  EXPECT_EQ(calls, 0) << "read in place although a writer maps it";
  EXPECT_TRUE(stored(bytes_));
  EXPECT_EQ(stat_of(*c_, "fsync_in_place"), 0);
  EXPECT_EQ(stat_of(*c_, "fsync_copies"), 1);
}

}  // namespace ckptfwd::fwd::test
