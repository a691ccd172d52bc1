// Whether a version is unchanged since its last fsync is told by a hash of its whole
// staged file (tens of ms for 64 MiB, hundreds for GiBs). It runs without the state lock,
// at an fsync or, after a CLOSE (answered first), in the batcher: other clients are
// answered meanwhile, and what they do meanwhile (open the path and write it, unlink or
// rename it) ends as it would have without the hash.
// TestHooks::during_synced_hash (forwarder/util/test_hooks.h) runs right after the hash, before the
// lock is taken again; its requests run on clients of their own and are given kAnswerLimit to be
// answered, so a hash under the lock makes them fail instead of hanging the test.
#include <sys/stat.h>

#include <atomic>
#include <functional>
#include <future>

#include "forwarder_store_check.h"

namespace ckptfwd::fwd::test {

namespace {
// Long enough for any answer on a loaded machine: a request not answered by then waits
// for the lock the hash holds.
constexpr std::chrono::seconds kAnswerLimit{10};

// Which of the known contents got is (by name), so a failure prints a name, not a MiB.
std::string which(const std::string& got,
                  const std::vector<std::pair<std::string, std::string>>& known) {
  for (const auto& [name, bytes] : known)
    if (got == bytes) return name;
  return got.size() <= 200 ? got : "<" + std::to_string(got.size()) + " other bytes>";
}
}  // namespace

class SyncedHashTest : public ForwarderTest {
 protected:
  void SetUp() override {
    ForwarderTest::SetUp();
    // Nothing but an fsync seals a batch, so what is committed is what the test did.
    cfg_.batch_window_ms = 60000;
    cfg_.wave_window_ms = 60000;
  }
  void TearDown() override {
    wait_late();
    ForwarderTest::TearDown();
  }

  Core& start_core() {
    fwd_ = std::make_unique<Forwarder>(cfg_, paths_, timing_);
    std::string err;
    EXPECT_EQ(fwd_->start(&err), Forwarder::Start::kReady) << err;
    thread_ = std::thread([this] { rc_ = fwd_->run(); });
    return fwd_->core();
  }

  // Opens path for writing through c, writes bytes and fsyncs: the version stays open,
  // its bytes committed as its snapshot. The OPEN's reply (vid at [1], staged file at [2]).
  std::vector<std::string> open_synced(Client& c, const std::string& path,
                                       const std::string& bytes) {
    auto r = c.call({"OPEN", path, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
    EXPECT_EQ(r[0], "OK");
    if (r.size() < 3 || r[0] != "OK") return {"", "", ""};
    write_file(r[2], bytes);
    EXPECT_EQ(c.call({"SYNC", r[1]})[0], "OK");
    EXPECT_EQ(stat_of(c, "files_committed"), 1) << "the fsync's snapshot";
    return r;
  }

  // Runs fn with a client of its own on another thread. True if it finished within
  // kAnswerLimit; else it finishes later, and the test waits for it (wait_late) before
  // what fn refers to goes away.
  bool done_in_time(std::function<void(Client&)> fn) {
    auto f = std::async(std::launch::async, [sock = std::string(paths_.socket), fn] {
      Client c(sock);
      if (c.ok()) fn(c);
    });
    if (f.wait_for(kAnswerLimit) == std::future_status::ready) return true;
    late_.push_back(std::move(f));
    return false;
  }
  void wait_late() {
    for (auto& f : late_) f.wait();
    late_.clear();
  }

  // hook wrapped to count its calls and say when its first call ended (hook_ended), so a
  // test does not read what the hook sets while the batcher still runs it (a DRAIN may
  // return meanwhile: the hook's UNLINK drops the version it waits for).
  std::function<void()> first_call(std::function<void()> hook) {
    return [this, hook] {
      if (calls_++) return;
      hook();
      ended_.set_value();
    };
  }
  bool hook_ended() {
    return ended_.get_future().wait_for(kAnswerLimit) == std::future_status::ready;
  }
  // CLOSEs r's version (size bytes) through c, the batcher running `during` once right
  // after its hash, and drains. True when the hook ran once and ended.
  bool close_while_hashed(Client& c, const std::vector<std::string>& r, size_t size,
                          std::function<void()> during) {
    test_hooks().during_synced_hash = first_call(std::move(during));
    EXPECT_EQ(c.call({"CLOSE", r[1], std::to_string(size)})[0], "OK");
    EXPECT_EQ(c.call({"DRAIN"})[0], "OK");
    const bool ended = hook_ended();
    test_hooks().during_synced_hash = nullptr;
    wait_late();
    return ended && calls_.load() == 1;
  }
  std::atomic<int> calls_{0};
  std::promise<void> ended_;
  std::vector<std::future<void>> late_;
};

// A CLOSE of a 4 MiB file unchanged since its fsync is answered before the hash that tells
// so (the batcher's): the hook waits for the CLOSE's answer, which would never come if the
// CLOSE waited for the hash. Another client's STATS and its OPEN of another path are
// answered while the batcher hashes, and the file is not committed again.
TEST_F(SyncedHashTest, ACloseIsAnsweredBeforeTheHashAndOthersDuringIt) {
  start_core();
  auto c = client();
  std::string p = data_ + "/r0.bin", a = payload(4 << 20, 1);
  auto r = open_synced(*c, p, a);
  std::string stats_reply, open_reply;
  bool stats_in_time = false, open_in_time = false, close_answered_first = false;
  std::promise<void> close_answered;
  std::shared_future<void> answered = close_answered.get_future().share();
  test_hooks().during_synced_hash = first_call([&] {
    close_answered_first = answered.wait_for(kAnswerLimit) == std::future_status::ready;
    stats_in_time = done_in_time([&](Client& o) { stats_reply = o.call({"STATS"})[0]; });
    open_in_time = done_in_time([&](Client& o) {
      open_reply =
          o.call({"OPEN", data_ + "/r1.bin", std::to_string(O_WRONLY | O_CREAT), "644"})[0];
    });
  });
  std::string close_reply = c->call({"CLOSE", r[1], std::to_string(a.size())})[0];
  close_answered.set_value();
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");  // the batcher settled it
  ASSERT_TRUE(hook_ended());
  test_hooks().during_synced_hash = nullptr;
  wait_late();
  EXPECT_EQ(close_reply, "OK");
  EXPECT_EQ(calls_.load(), 1);
  EXPECT_TRUE(close_answered_first) << "the CLOSE waited for the hash";
  EXPECT_TRUE(stats_in_time) << "STATS waited for the hash";
  EXPECT_TRUE(open_in_time) << "an OPEN of another path waited for the hash";
  EXPECT_EQ(stats_reply, "OK");
  EXPECT_EQ(open_reply, "OK");
  // r1.bin is closed as written when its client went away: once the forwarder has seen
  // that client go (its thread, not this one's requests; on a loaded machine later than a
  // DRAIN right now, which does not wait for open versions).
  for (int i = 0; i < 500 && stat_of(*c, "files_captured") < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  // The fsync's snapshot and r1.bin (empty): r0.bin closed unchanged is not committed again.
  EXPECT_EQ(stat_of(*c, "files_committed"), 2);
  EXPECT_EQ(stat_of(*c, "files_captured"), 2) << "the unchanged close is no capture of its own";
  EXPECT_EQ(which(on_store(store(), p, root_ + "/restored"), {{"a", a}}), "a");
  EXPECT_EQ(on_store(store(), data_ + "/r1.bin", root_ + "/restored"), "");
}

// Another client opens the path for writing while the batcher hashes the version closed
// unchanged since its fsync, writes new bytes of the same size, puts the mtime back (what
// a write through a mapping to tmpfs leaves) and closes: its bytes are committed.
TEST_F(SyncedHashTest, AWriterOpeningDuringTheHashGetsItsBytesCommitted) {
  start_core();
  auto c = client();
  std::string p = data_ + "/r0.bin", a = payload(1 << 20, 2), b = payload(1 << 20, 3);
  auto r = open_synced(*c, p, a);
  std::string reopen_close;
  bool in_time = false, wrote = false;
  ASSERT_TRUE(close_while_hashed(*c, r, a.size(), [&] {
    in_time = done_in_time([&](Client& j) {
      auto o = j.call({"OPEN", p, std::to_string(O_WRONLY), "644"});
      if (o.size() < 3 || o[0] != "OK") return;
      struct stat st;
      int fd = ::open(o[2].c_str(), O_WRONLY);
      if (fd < 0 || ::fstat(fd, &st) != 0) return;
      wrote = ::pwrite(fd, b.data(), b.size(), 0) == static_cast<ssize_t>(b.size());
      struct timespec times[2] = {st.st_atim, st.st_mtim};
      wrote = wrote && ::futimens(fd, times) == 0;
      ::close(fd);
      reopen_close = j.call({"CLOSE", o[1], std::to_string(b.size())})[0];
    });
  }));
  EXPECT_TRUE(in_time) << "the writer waited for the hash";
  EXPECT_TRUE(wrote);
  EXPECT_EQ(reopen_close, "OK");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(which(on_store(store(), p, root_ + "/restored"), {{"a", a}, {"b", b}}), "b")
      << "the later writer's bytes";
  EXPECT_EQ(which(read_through(*c, p), {{"a", a}, {"b", b}}), "b");
  EXPECT_EQ(stat_of(*c, "errors"), 0);
}

// The path is unlinked by another client while the batcher hashes the version closed
// unchanged since its fsync: nothing of the path is left on the store, no error.
TEST_F(SyncedHashTest, AnUnlinkDuringTheHashLeavesNothingAndNoError) {
  start_core();
  auto c = client();
  std::string p = data_ + "/gone.bin", a = payload(1 << 20, 4);
  auto r = open_synced(*c, p, a);
  std::string unlink_reply;
  bool in_time = false;
  ASSERT_TRUE(close_while_hashed(*c, r, a.size(), [&] {
    in_time = done_in_time([&](Client& o) { unlink_reply = o.call({"UNLINK", p})[0]; });
  }));
  EXPECT_TRUE(in_time) << "the UNLINK waited for the hash";
  EXPECT_EQ(unlink_reply, "OK");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(on_store(store(), p, root_ + "/restored"), "<not on the store>");
  EXPECT_EQ(read_through(*c, p), "<PASS>") << "neither staged nor on the store";
  EXPECT_EQ(stat_of(*c, "files_committed"), 1) << "only the fsync's snapshot";
  EXPECT_EQ(stat_of(*c, "errors"), 0);
}

// fsync, close, rename (the safe way to write a checkpoint), with the rename arriving
// while the batcher hashes the closed version: the snapshot moves to the new name with
// the catalog entry and still stands; nothing is committed again.
TEST_F(SyncedHashTest, ARenameDuringTheHashKeepsTheSnapshot) {
  start_core();
  auto c = client();
  std::string p = data_ + "/ck.tmp", fin = data_ + "/ck.bin", a = payload(1 << 20, 5);
  auto r = open_synced(*c, p, a);
  std::string rename_reply;
  bool in_time = false;
  ASSERT_TRUE(close_while_hashed(*c, r, a.size(), [&] {
    in_time = done_in_time([&](Client& o) { rename_reply = o.call({"RENAME", p, fin})[0]; });
  }));
  EXPECT_TRUE(in_time) << "the RENAME waited for the hash";
  EXPECT_EQ(rename_reply, "OK");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(stat_of(*c, "files_committed"), 1) << "closed unchanged: not committed again";
  EXPECT_EQ(which(on_store(store(), fin, root_ + "/restored"), {{"a", a}}), "a");
  EXPECT_EQ(on_store(store(), p, root_ + "/restored"), "<not on the store>");
}

// An fsync without a change since the last one hashes the file: another client's STATS
// is answered meanwhile, and nothing is committed.
TEST_F(SyncedHashTest, OtherClientsAreAnsweredWhileASyncHashes) {
  start_core();
  auto c = client();
  std::string p = data_ + "/r0.bin", a = payload(4 << 20, 6);
  auto r = open_synced(*c, p, a);
  std::string stats_reply;
  bool in_time = false;
  std::atomic<int> hashes{0};
  test_hooks().during_synced_hash = [&] {
    if (hashes++) return;
    in_time = done_in_time([&](Client& o) { stats_reply = o.call({"STATS"})[0]; });
  };
  std::string sync_reply = c->call({"SYNC", r[1]})[0];
  test_hooks().during_synced_hash = nullptr;
  wait_late();
  EXPECT_EQ(sync_reply, "OK");
  EXPECT_EQ(hashes.load(), 1);
  EXPECT_TRUE(in_time) << "STATS waited for the hash";
  EXPECT_EQ(stats_reply, "OK");
  EXPECT_EQ(stat_of(*c, "files_committed"), 1) << "unchanged since the last fsync";
  ASSERT_EQ(c->call({"CLOSE", r[1], std::to_string(a.size())})[0], "OK");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(stat_of(*c, "files_committed"), 1);
}

// A process goes away with a file open that it fsynced and did not change since: the
// hash that finds it unchanged runs without the lock (another client is answered), and
// the file is not committed again.
TEST_F(SyncedHashTest, AWriterGoingAwayUnchangedHashesWithoutTheLock) {
  Core& core = start_core();
  auto c = client();
  auto watcher = client();
  std::string p = data_ + "/r0.bin", a = payload(4 << 20, 7);
  auto r = open_synced(*c, p, a);
  std::string stats_reply;
  bool in_time = false;
  std::atomic<int> hashes{0};
  std::promise<void> hashed;
  {
    // Set under the state lock. Only the connection's end below makes the batcher run
    // the hook, and a closed socket orders nothing between threads (it is no request the
    // forwarder reads): without the lock, the hook and the locals it refers to would be
    // written here and read on the batcher with no happens-before. The batcher takes
    // this lock to find the closed version, so after this block.
    std::lock_guard lk(core.state.mu);
    test_hooks().during_synced_hash = [&] {
      if (hashes++) return;
      in_time = done_in_time([&](Client& o) { stats_reply = o.call({"STATS"})[0]; });
      hashed.set_value();
    };
  }
  c.reset();  // its connection goes away (to the forwarder this process looks gone)
  ASSERT_EQ(hashed.get_future().wait_for(kAnswerLimit), std::future_status::ready);
  // The version leaves once the hash's verdict is in (the drain waits for no open one).
  const uint64_t vid = std::stoull(r[1]);
  for (int i = 0; i < 1000; ++i) {
    {
      std::lock_guard lk(core.state.mu);
      if (!core.state.find(vid)) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  test_hooks().during_synced_hash = nullptr;
  wait_late();
  EXPECT_EQ(hashes.load(), 1);
  EXPECT_TRUE(in_time) << "STATS waited for the hash";
  EXPECT_EQ(stats_reply, "OK");
  ASSERT_EQ(watcher->call({"DRAIN"})[0], "OK");
  {
    std::lock_guard lk(core.state.mu);
    EXPECT_EQ(core.state.find(vid), nullptr) << "forgotten as unchanged";
  }
  EXPECT_EQ(stat_of(*watcher, "files_committed"), 1) << "not committed again";
  EXPECT_EQ(which(on_store(store(), p, root_ + "/restored"), {{"a", a}}), "a");
}

}  // namespace ckptfwd::fwd::test
