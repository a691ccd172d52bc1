// The journal of leased versions' descriptions (common/lease_journal.h): the last record
// of a vid counts, across files in order; a record cut short at the end is none; damaged
// bytes are passed over to the next line.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/lease_journal.h"

namespace ckptfwd {
namespace {

using Last = std::map<uint64_t, std::optional<std::string>>;

TEST(LeaseJournal, TheLastRecordOfAVidCounts) {
  std::string b = journal_description(7, "lease\n") + journal_description(8, "path=/a\n") +
                  journal_description(7, "path=/b\nstate=closed\n") + journal_gone(8);
  Last last;
  EXPECT_EQ(parse_journal(b, last), 0u);
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[7], "path=/b\nstate=closed\n");
  EXPECT_FALSE(last[8].has_value());
}

TEST(LeaseJournal, ARecordCutShortAtTheEndIsNone) {
  const std::string whole = journal_description(3, "path=/x\nstate=closed\n");
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    Last last;
    EXPECT_EQ(parse_journal(journal_description(2, "lease\n") + whole.substr(0, cut), last), 0u)
        << cut;
    EXPECT_EQ(last.count(3), 0u) << "cut at " << cut;
    EXPECT_EQ(last[2], "lease\n");
  }
  const std::string gone = journal_gone(12);
  for (size_t cut = 0; cut < gone.size(); ++cut) {
    Last last;
    parse_journal(journal_description(12, "lease\n") + gone.substr(0, cut), last);
    EXPECT_EQ(last[12], "lease\n") << "cut at " << cut;
  }
}

TEST(LeaseJournal, DamagedBytesArePassedOverToTheNextLine) {
  std::string b = journal_description(1, "lease\n") + "garbage line\n" + "M x 3\nabc" +
                  "\nM 0 5\nlease\n" + "M 4 99999\n" + journal_description(5, "lease\n") +
                  "F 6 extra\n" + journal_description(6, "path=/y\n");
  Last last;
  size_t bad = parse_journal(b, last);
  EXPECT_GE(bad, 4u);
  EXPECT_EQ(last[1], "lease\n");
  EXPECT_EQ(last[5], "lease\n");
  EXPECT_EQ(last[6], "path=/y\n");
  EXPECT_EQ(last.count(0), 0u);
  EXPECT_EQ(last.count(4), 0u);  // a length over a page
}

TEST(LeaseJournal, FilesAreReadInOrderOfTheirNumbers) {
  char tmpl[] = "/tmp/ckfwd-journal-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  auto put = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
  };
  put(journal_file_name(10), journal_gone(1) + journal_description(2, "path=/late\n"));
  put(journal_file_name(9), journal_description(1, "lease\n") + journal_description(2, "lease\n"));
  put("journal.x", journal_description(3, "lease\n"));  // no journal of ours
  put("v3.meta", "lease\n");
  EXPECT_EQ(journal_files(dir).size(), 2u);
  auto d = journal_descriptions(dir);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[2], "path=/late\n");
  // Never through a symbolic link.
  ASSERT_EQ(symlink((dir + "/" + journal_file_name(10)).c_str(),
                    (dir + "/" + journal_file_name(11)).c_str()),
            0);
  ASSERT_EQ(unlink((dir + "/" + journal_file_name(10)).c_str()), 0);
  d = journal_descriptions(dir);
  EXPECT_EQ(d.size(), 2u);  // journal 9 alone: 1 and 2 as leases
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ckptfwd
