// Close-to-open across nodes (pending_journal.h): what one node's forwarder closed and has
// not committed yet, another node's sees as pending; a forwarder does not read back its
// own lines, but never skips another node's that came in between.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "forwarder/state/pending_journal.h"

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

// The file is created only in a store the forwarder would commit into (docs/semantics.md, "Other
// users on the node"), never in the directory another user's symbolic link leads to.
TEST_F(PendingJournalTest, NeverCreatedThroughAnotherUsersStoreSymlink) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the link to another uid";
  const std::string target = root_ + "/elsewhere";
  ASSERT_EQ(::mkdir(target.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(target.c_str(), store_.c_str()), 0);
  ASSERT_EQ(::lchown(store_.c_str(), 65534, 65534), 0);
  std::string err;
  EXPECT_FALSE(a_.closed(store_, 1, "/ckpt/f0", &err));
  EXPECT_NE(err.find(store_ + " is a symbolic link owned by uid 65534"), std::string::npos) << err;
  EXPECT_NE(err.find("Fix:"), std::string::npos) << err;
  EXPECT_TRUE(fs::is_empty(target)) << "a file was created through the link";
}

TEST_F(PendingJournalTest, ARefusedStoreGetsNoFileAndAnOwnLinkedOneDoes) {
  ASSERT_EQ(::mkdir(store_.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(store_.c_str(), 0777), 0);  // whatever the umask
  std::string err;
  EXPECT_FALSE(a_.closed(store_, 1, "/ckpt/f0", &err));
  EXPECT_NE(err.find("group/other can write into it"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(store_ + "/.pending-job"));
  // A symbolic link of ours to a store of ours is the store (docs/semantics.md, "Other users").
  const std::string own = root_ + "/own", link = root_ + "/link";
  ASSERT_EQ(::mkdir(own.c_str(), 0700), 0);
  ASSERT_EQ(::symlink(own.c_str(), link.c_str()), 0);
  ASSERT_TRUE(a_.closed(link, 1, "/ckpt/f0", &err)) << err;
  EXPECT_TRUE(fs::exists(own + "/.pending-job"));
  EXPECT_TRUE(b_.pending_elsewhere(link, "/ckpt/f0"));
}

}  // namespace
}  // namespace ckptfwd::fwd
