// Two batches in flight (batcher.h): an fsync's batch is written beside a batch of closed
// files instead of after it, and a newer version of a path never commits before an
// older one still in flight.
#include <future>

#include "forwarder_store_check.h"

namespace ckptfwd::fwd::test {

namespace {
// Holds every batch that no fsync waits for after it was written, before its commit,
// until release(); tells when the first one got there.
class BulkBatchGate {
 public:
  BulkBatchGate() : released_(release_.get_future().share()) {
    test_hooks().after_batch_written = [this](const std::vector<BatchFile>& files) {
      if (files.empty() || files.front().synced) return;
      if (held_++ == 0) in_flight_.set_value();
      released_.wait();
    };
  }
  ~BulkBatchGate() { release(); }
  void wait_in_flight() { in_flight_.get_future().wait(); }
  void release() {
    if (!done_.exchange(true)) release_.set_value();
  }

 private:
  std::promise<void> in_flight_, release_;
  std::shared_future<void> released_;
  std::atomic<int> held_{0};
  std::atomic<bool> done_{false};
};
}  // namespace

// A forwarder whose batches of closed files are held by a gate.
class LanesTest : public ForwarderTest {
 protected:
  void SetUp() override {
    ForwarderTest::SetUp();
    fwd_ = std::make_unique<Forwarder>(cfg_, paths_, timing_);
    gate_ = std::make_unique<BulkBatchGate>();
    std::string err;
    ASSERT_EQ(fwd_->start(&err), Forwarder::Start::kReady) << err;
    thread_ = std::thread([this] { rc_ = fwd_->run(); });
  }
  void TearDown() override {
    if (gate_) gate_->release();  // the forwarder drains what it holds on its way out
    ForwarderTest::TearDown();
  }
  std::unique_ptr<BulkBatchGate> gate_;
};

TEST_F(LanesTest, AnFsyncDoesNotWaitForABatchOfClosedFilesInFlight) {
  BulkBatchGate& gate = *gate_;
  auto c = client();
  const std::string closed = data_ + "/closed.bin", synced = data_ + "/synced.bin";
  const std::string a = payload(1 << 20, 3), b = payload(300000, 4);
  write_version(*c, closed, a);
  gate.wait_in_flight();  // its batch is written and held before its commit

  auto r = c->call({"OPEN", synced, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
  ASSERT_EQ(r[0], "OK");
  write_file(r[2], b);
  auto sync = std::async(std::launch::async, [&] {
    auto s = client();
    return s->call({"SYNC", r[1]});
  });
  // With one batch at a time the SYNC would wait for the held batch: for ever here.
  const bool waited = sync.wait_for(std::chrono::seconds(30)) != std::future_status::ready;
  if (waited) gate.release();  // before the SYNC's future waits for it on the way out
  ASSERT_FALSE(waited) << "the fsync waited for the batch in flight";
  EXPECT_EQ(sync.get()[0], "OK");
  EXPECT_EQ(stat_of(*c, "fsync_batches_beside"), 1);
  EXPECT_TRUE(on_store(store(), synced, root_ + "/restored") == b);
  EXPECT_EQ(on_store(store(), closed, root_ + "/restored"), "<not on the store>");

  gate.release();
  ASSERT_EQ(c->call({"CLOSE", r[1], std::to_string(b.size())})[0], "OK");
  ASSERT_EQ(c->call({"WAITALL"}), std::vector<std::string>{"OK"});
  EXPECT_TRUE(on_store(store(), closed, root_ + "/restored") == a);
  EXPECT_TRUE(on_store(store(), synced, root_ + "/restored") == b);
}

TEST_F(LanesTest, ANewerVersionCommitsAfterAnOlderOneInFlight) {
  BulkBatchGate& gate = *gate_;
  auto c = client();
  const std::string p = data_ + "/ck.bin";
  const std::string older = payload(1 << 20, 5), update = payload(200000, 6);
  const std::string newer = update + older.substr(update.size());
  write_version(*c, p, older);
  gate.wait_in_flight();  // the older version's batch is held before its commit

  // The file updated in place (no O_TRUNC, which would drop the older version) and
  // fsync'd: its batch must not commit first, or the older version's commit would
  // replace it in the catalog.
  auto r = c->call({"OPEN", p, std::to_string(O_WRONLY), "644"});
  ASSERT_EQ(r[0], "OK");
  {
    int fd = ::open(r[2].c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, update.data(), update.size(), 0), static_cast<ssize_t>(update.size()));
    ::close(fd);
  }
  auto sync = std::async(std::launch::async, [&] {
    auto s = client();
    return s->call({"SYNC", r[1]});
  });
  // Most likely the SYNC is waiting by now; had it not arrived yet the test still holds.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  gate.release();
  EXPECT_EQ(sync.get()[0], "OK");
  // Once the older version's batch is through too, the store still holds what the fsync
  // made durable (a crash now restores it). The CLOSE below would mend a wrong order by
  // committing the file again: the check must come before it.
  ASSERT_EQ(c->call({"WAITALL"}), std::vector<std::string>{"OK"});
  EXPECT_TRUE(on_store(store(), p, root_ + "/restored") == newer)
      << "the older version's commit replaced what the fsync made durable";
  ASSERT_EQ(c->call({"CLOSE", r[1], std::to_string(newer.size())})[0], "OK");
  ASSERT_EQ(c->call({"WAITALL"}), std::vector<std::string>{"OK"});
  EXPECT_TRUE(on_store(store(), p, root_ + "/restored") == newer);
  EXPECT_TRUE(read_through(*c, p) == newer);
}

}  // namespace ckptfwd::fwd::test
