// The forwarder's lease journal (staging/lease_journal_writer.h): when records reach the
// file, and which files stay.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "common/lease_journal.h"
#include "forwarder/staging/lease_journal_writer.h"

namespace ckptfwd::fwd {
namespace {

class LeaseJournalWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ckfwd-jw-XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    LeaseJournalWriter::defer_on_this_thread(false);
    std::filesystem::remove_all(dir_);
  }
  std::string dir_;
};

TEST_F(LeaseJournalWriterTest, ARecordIsOnFileAtOnceUnlessItsThreadDefers) {
  LeaseJournalWriter j;
  j.set_dir(dir_);
  ASSERT_TRUE(j.record(1, "lease\n"));
  EXPECT_EQ(journal_descriptions(dir_)[1], "lease\n");
  LeaseJournalWriter::defer_on_this_thread(true);
  ASSERT_TRUE(j.record(1, "path=/a\nstate=closed\n"));
  ASSERT_TRUE(j.record(2, "lease\n"));
  auto d = journal_descriptions(dir_);
  EXPECT_EQ(d[1], "lease\n");  // not yet
  EXPECT_EQ(d.count(2), 0u);
  // Another thread's record takes the deferred ones along, in order.
  std::thread([&] { j.record(3, "lease\n"); }).join();
  d = journal_descriptions(dir_);
  EXPECT_EQ(d[1], "path=/a\nstate=closed\n");
  EXPECT_EQ(d[2], "lease\n");
  EXPECT_EQ(d[3], "lease\n");
  j.gone(2);
  EXPECT_EQ(journal_descriptions(dir_).count(2), 1u);  // deferred
  ASSERT_TRUE(j.flush());
  EXPECT_EQ(journal_descriptions(dir_).count(2), 0u);
  j.gone(99);  // never recorded: nothing
}

TEST_F(LeaseJournalWriterTest, ABatchWritesOnceAtItsEnd) {
  LeaseJournalWriter j;
  j.set_dir(dir_);
  for (uint64_t v = 1; v <= 3; ++v) j.record(v, "lease\n");
  {
    LeaseJournalWriter::Batch b(j);
    for (uint64_t v = 1; v <= 3; ++v) j.gone(v);
    EXPECT_EQ(journal_descriptions(dir_).size(), 3u);
  }
  EXPECT_EQ(journal_descriptions(dir_).size(), 0u);
}

// A new file holds what still counts in the older ones, which then go: a version open
// for long pins nothing, and at most two files are there at any time.
TEST_F(LeaseJournalWriterTest, ANewFileTakesWhatCountsAndTheOldOnesGo) {
  LeaseJournalWriter j;
  j.set_dir(dir_);
  j.record(1, "path=/open/for/long\n");
  const std::string text(200, 'p');
  size_t most = 0;
  for (uint64_t vid = 2; vid < 30000; ++vid) {
    j.record(vid, text);
    if (vid > 2) j.gone(vid - 1);
    if (vid % 1000 == 0) most = std::max(most, journal_files(dir_).size());
  }
  EXPECT_LE(most, 2u);
  auto d = journal_descriptions(dir_);
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d[1], "path=/open/for/long\n");
  EXPECT_EQ(d.count(29999), 1u);
}

TEST_F(LeaseJournalWriterTest, ADroppedVersionIsGoneAtOnceEvenWhenItsThreadDefers) {
  LeaseJournalWriter j;
  j.set_dir(dir_);
  j.record(1, "path=/a\nstate=closed\n");
  LeaseJournalWriter::defer_on_this_thread(true);
  EXPECT_TRUE(j.gone_now(1));
  EXPECT_EQ(journal_descriptions(dir_).count(1), 0u);
}

// A lease kept for its client (its version refused) is carried into new files while its
// data file is there, and dropped once its client took the file away.
TEST_F(LeaseJournalWriterTest, AVidKeptForItsClientGoesOnceItsDataIsGone) {
  LeaseJournalWriter j;
  j.set_dir(dir_);
  const std::string data = dir_ + "/v1.data";
  std::ofstream(data) << "x";
  j.record(1, "lease\n");
  j.keep_for_client(1);
  const std::string text(200, 'p');
  uint64_t vid = 2;
  auto fill_one_file = [&] {
    const std::string last = journal_files(dir_).back();
    for (int i = 0; i < 20000 && journal_files(dir_).back() == last; ++i) {
      j.record(vid, text);
      j.gone(vid++);
    }
  };
  fill_one_file();
  EXPECT_EQ(journal_descriptions(dir_)[1], "lease\n");  // carried over
  EXPECT_LE(journal_files(dir_).size(), 2u);
  ::unlink(data.c_str());  // the client wrote the real path from it
  fill_one_file();
  j.flush();
  EXPECT_EQ(journal_descriptions(dir_).count(1), 0u);
}

TEST_F(LeaseJournalWriterTest, NumbersStartAboveTheFilesThere) {
  {
    LeaseJournalWriter old;
    old.set_dir(dir_);
    old.record(5, "lease\n");
  }
  LeaseJournalWriter j;
  j.set_dir(dir_);
  j.record(5, "path=/new\n");
  auto files = journal_files(dir_);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(journal_descriptions(dir_)[5], "path=/new\n");
  // At exit only its own files go: the earlier one is a recovery's to take in.
  j.gone(5);
  EXPECT_TRUE(j.remove_if_unused());
  files = journal_files(dir_);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(journal_descriptions(dir_)[5], "lease\n");
}

TEST_F(LeaseJournalWriterTest, AtExitTheFilesGoOnlyWhenNoDescriptionCounts) {
  LeaseJournalWriter j;
  j.set_dir(dir_);
  auto data = [&](uint64_t vid) { return dir_ + "/v" + std::to_string(vid) + ".data"; };
  std::ofstream(data(1)) << "x";
  std::ofstream(data(2)) << "y";
  j.record(1, "lease\n");
  j.record(2, "path=/a\nstate=closed\n");
  j.record(3, "lease\n");  // its data file is gone: its client wrote the real path
  j.gone(1);
  EXPECT_FALSE(j.remove_if_unused());  // 2 waits for a recovery
  EXPECT_EQ(journal_descriptions(dir_).count(2), 1u);
  j.gone(2);
  EXPECT_TRUE(j.remove_if_unused());
  EXPECT_TRUE(journal_files(dir_).empty());
}

TEST_F(LeaseJournalWriterTest, RecordsWaitForAJournalThatCannotBeWrittenAndNoLeaseIsMade) {
  LeaseJournalWriter j;
  j.set_dir(dir_ + "/missing");
  EXPECT_TRUE(j.record(1, "lease\n"));  // pending
  EXPECT_FALSE(j.writable());
  EXPECT_FALSE(j.flush());
  std::filesystem::create_directory(dir_ + "/missing");
  EXPECT_TRUE(j.record(2, "lease\n"));  // written again: both
  EXPECT_TRUE(j.writable());
  EXPECT_EQ(journal_descriptions(dir_ + "/missing").size(), 2u);
}

}  // namespace
}  // namespace ckptfwd::fwd
