// A forwarder that exits drained removes its session dir (socket, lock, read views); one
// that leaves staged data behind keeps it for the next forwarder to recover.
#include <sys/file.h>

#include "forwarder_test_util.h"

namespace ckptfwd::fwd::test {

TEST_F(ForwarderTest, DrainedExitRemovesTheSessionDir) {
  start();
  {
    auto c = client();
    write_version(*c, data_ + "/a", "bytes");
    EXPECT_EQ(read_through(*c, data_ + "/a"), "bytes");
    ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
    EXPECT_EQ(read_through(*c, data_ + "/a"), "bytes");  // a read view from the store
  }
  // A library took part in an election once: the lock file exists.
  int lk = ::open(paths_.lock, O_RDWR | O_CREAT, 0600);
  ASSERT_GE(lk, 0);
  ::close(lk);
  stop();
  EXPECT_FALSE(fs::exists(paths_.dir)) << "leftovers: " << paths_.dir;
}

TEST_F(ForwarderTest, ExitWithStagedDataKeepsTheSessionDir) {
  write_file(root_ + "/blocker", "x");
  cfg_.store = root_ + "/blocker/store";  // can never be created: the commit fails
  timing_.retry_delays = {};
  start();
  {
    auto c = client();
    write_version(*c, data_ + "/f", "precious");
  }
  stop();
  EXPECT_TRUE(fs::exists(paths_.dir));
  bool staged = false;
  for (auto& e : fs::directory_iterator(paths_.dir)) staged |= e.path().extension() == ".data";
  EXPECT_TRUE(staged) << "the staged version must survive for recovery";
}

TEST_F(ForwarderTest, ExitWaitsForAnElectionAndUnlinksTheLockItHeld) {
  start();
  // A library holds the election lock (it is about to start a forwarder).
  int lk = ::open(paths_.lock, O_RDWR | O_CREAT, 0600);
  ASSERT_GE(lk, 0);
  ASSERT_EQ(flock(lk, LOCK_EX), 0);
  std::thread stopper([this] { stop(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(fs::exists(paths_.lock)) << "never removed under a holder";
  ASSERT_EQ(flock(lk, LOCK_UN), 0);
  stopper.join();
  struct stat st {};
  ASSERT_EQ(fstat(lk, &st), 0);
  EXPECT_EQ(st.st_nlink, 0u) << "the lock a waiter got is stale: it must re-check the path";
  EXPECT_FALSE(fs::exists(paths_.dir));
  ::close(lk);
}

}  // namespace ckptfwd::fwd::test
