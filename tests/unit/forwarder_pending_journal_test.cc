// Close-to-open across nodes (pending_journal.h): what one node's forwarder closed and has
// not committed yet, another node's sees as pending; a forwarder does not read back its
// own lines, but never skips another node's that came in between.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "forwarder/pending_journal.h"

namespace ckptfwd::fwd {
namespace {

namespace fs = std::filesystem;

class PendingJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ckfwd-pending-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    store_ = root_ + "/store";
    a_.set_identity("a", "job");
    b_.set_identity("b", "job");
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string root_, store_;
  PendingJournal a_, b_;
};

TEST_F(PendingJournalTest, AnotherNodesCloseIsPendingUntilSettled) {
  std::string err;
  ASSERT_TRUE(a_.closed(store_, 1, "/ckpt/f0", &err)) << err;
  EXPECT_TRUE(b_.pending_elsewhere(store_, "/ckpt/f0"));
  EXPECT_FALSE(a_.pending_elsewhere(store_, "/ckpt/f0")) << "a node never waits for itself";
  a_.settled(store_, 1);
  EXPECT_FALSE(b_.pending_elsewhere(store_, "/ckpt/f0"));
}

TEST_F(PendingJournalTest, ALineOfAnotherNodeBetweenTwoOfOursIsNotSkipped) {
  std::string err;
  ASSERT_TRUE(a_.closed(store_, 1, "/ckpt/a1", &err)) << err;
  EXPECT_FALSE(a_.pending_elsewhere(store_, "/ckpt/b1"));  // a's view is current
  ASSERT_TRUE(b_.closed(store_, 7, "/ckpt/b1", &err)) << err;
  // a appends after b's line: taking its own line without reading must not step over b's.
  ASSERT_TRUE(a_.closed(store_, 2, "/ckpt/a2", &err)) << err;
  EXPECT_TRUE(a_.pending_elsewhere(store_, "/ckpt/b1"));
  EXPECT_FALSE(a_.pending_elsewhere(store_, "/ckpt/a2"));
  // And after a line of its own taken without reading, b's next one is read.
  ASSERT_TRUE(a_.closed(store_, 3, "/ckpt/a3", &err)) << err;
  ASSERT_TRUE(b_.closed(store_, 8, "/ckpt/b2", &err)) << err;
  EXPECT_TRUE(a_.pending_elsewhere(store_, "/ckpt/b2"));
  b_.settled(store_, 7);
  b_.settled(store_, 8);
  EXPECT_FALSE(a_.pending_elsewhere(store_, "/ckpt/b1"));
  EXPECT_FALSE(a_.pending_elsewhere(store_, "/ckpt/b2"));
}

TEST_F(PendingJournalTest, ARenamedCloseOfOursStaysOursForTheOtherNode) {
  // A "+" for a (node, vid) already pending replaces its path; the other node then waits
  // for the new path, not the old one, also when the first line was taken without reading.
  std::string err;
  EXPECT_FALSE(a_.pending_elsewhere(store_, "/x"));
  ASSERT_TRUE(a_.closed(store_, 4, "/ckpt/old", &err)) << err;
  ASSERT_TRUE(a_.closed(store_, 4, "/ckpt/new", &err)) << err;
  EXPECT_FALSE(b_.pending_elsewhere(store_, "/ckpt/old"));
  EXPECT_TRUE(b_.pending_elsewhere(store_, "/ckpt/new"));
  a_.settled(store_, 4);
  EXPECT_FALSE(b_.pending_elsewhere(store_, "/ckpt/new"));
}

}  // namespace
}  // namespace ckptfwd::fwd
