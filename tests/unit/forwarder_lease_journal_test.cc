// The forwarder's lease journal (staging/lease_journal_writer.h): when records reach the
// file, and which files stay.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

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

TEST_F(LeaseJournalWriterTest, OldFilesGoOldestFirstOnceNothingInThemCounts) {
  LeaseJournalWriter j;
  j.set_dir(dir_);
  const std::string text(200, 'p');
  // File 1 fills with vids 1..n; vid 1 stays described there while the others go.
  uint64_t vid = 1;
  while (journal_files(dir_).size() < 2) j.record(vid++, text);
  const uint64_t first_of_2 = vid - 1;
  while (journal_files(dir_).size() < 3) j.record(vid++, text);
  for (uint64_t v = 2; v < first_of_2; ++v) j.gone(v);
  // File 2's vids all go: it holds gone records for file 1's vids and must wait for file 1.
  for (uint64_t v = first_of_2; v < vid; ++v) j.gone(v);
  EXPECT_EQ(journal_files(dir_).size(), 3u);
  auto d = journal_descriptions(dir_);
  EXPECT_EQ(d.size(), 1u);
  EXPECT_EQ(d.count(1), 1u);
  j.record(1, "lease\n");  // its last description moves to the newest file
  EXPECT_EQ(journal_files(dir_).size(), 1u);
  d = journal_descriptions(dir_);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[1], "lease\n");
}

// A description moved to a newer file by a record not written yet still counts where it
// was: that file stays until the record is on file.
TEST_F(LeaseJournalWriterTest, AFileStaysUntilTheRecordThatMovesItsLastDescriptionIsWritten) {
  LeaseJournalWriter j;
  j.set_dir(dir_);
  const std::string text(200, 'p');
  uint64_t vid = 1;
  while (journal_files(dir_).size() < 2) j.record(vid++, text);
  for (uint64_t v = 2; v < vid; ++v) j.gone(v);  // (file 2 is begun as file 1 fills)
  ASSERT_EQ(journal_files(dir_).size(), 2u);
  LeaseJournalWriter::defer_on_this_thread(true);
  ASSERT_TRUE(j.record(1, "path=/a\nstate=closed\n"));
  EXPECT_EQ(journal_files(dir_).size(), 2u);
  EXPECT_EQ(journal_descriptions(dir_)[1], text);  // the old one, until the new one is written
  ASSERT_TRUE(j.flush());
  EXPECT_EQ(journal_files(dir_).size(), 1u);
  EXPECT_EQ(journal_descriptions(dir_)[1], "path=/a\nstate=closed\n");
}

TEST_F(LeaseJournalWriterTest, ADroppedVersionIsGoneAtOnceEvenWhenItsThreadDefers) {
  LeaseJournalWriter j;
  j.set_dir(dir_);
  j.record(1, "path=/a\nstate=closed\n");
  LeaseJournalWriter::defer_on_this_thread(true);
  j.gone_now(1);
  EXPECT_EQ(journal_descriptions(dir_).count(1), 0u);
}

TEST_F(LeaseJournalWriterTest, AVidKeptForItsClientStopsPinningItsFileOnceItsDataIsGone) {
  LeaseJournalWriter j;
  j.set_dir(dir_);
  const std::string data = dir_ + "/v1.data";
  std::ofstream(data) << "x";
  j.record(1, "lease\n");
  j.keep_for_client(1);
  const std::string text(200, 'p');
  uint64_t vid = 2;
  while (journal_files(dir_).size() < 2) j.record(vid++, text);
  for (uint64_t v = 2; v < vid; ++v) j.gone(v);
  EXPECT_EQ(journal_files(dir_).size(), 2u);  // file 1 holds v1's "lease"
  EXPECT_EQ(journal_descriptions(dir_)[1], "lease\n");
  ::unlink(data.c_str());  // the client wrote the real path from it
  // Looked at when the next file is begun.
  const std::string third = dir_ + "/" + journal_file_name(3);
  struct stat st;
  while (::stat(third.c_str(), &st) != 0 && vid < 100000) j.record(vid++, text);
  j.flush();
  EXPECT_EQ(journal_descriptions(dir_).count(1), 0u);
  EXPECT_NE(::stat((dir_ + "/" + journal_file_name(1)).c_str(), &st), 0);  // file 1 went
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

TEST_F(LeaseJournalWriterTest, AJournalThatCannotBeWrittenRefusesRecords) {
  LeaseJournalWriter j;
  j.set_dir(dir_ + "/missing");
  EXPECT_FALSE(j.record(1, "lease\n"));
  EXPECT_FALSE(j.writable());
  std::filesystem::create_directory(dir_ + "/missing");
  EXPECT_TRUE(j.record(2, "lease\n"));  // written again: both
  EXPECT_TRUE(j.writable());
  EXPECT_EQ(journal_descriptions(dir_ + "/missing").size(), 2u);
}

}  // namespace
}  // namespace ckptfwd::fwd
