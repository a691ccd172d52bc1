// `ckptfwd drain`'s look at a session directory (staged_versions.h): closed versions
// described by a .meta or, for leased ones, by the lease journal.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/lease_journal.h"
#include "common/staged_meta.h"
#include "staged_versions.h"
#include "wire/lease.h"

namespace ckptfwd::cli {
namespace {

TEST(StagedVersions, ClosedOnesAreFoundInTheJournalToo) {
  char tmpl[] = "/tmp/ckfwd-staged-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  auto put = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
  };
  VersionMeta closed{"/ck/a.bin", -1, 0644, 1};
  closed.closed = true;
  VersionMeta open{"/ck/b.bin", -1, 0644, 1};
  put("v1.data", "a");
  put("v2.data", "b");
  put("v3.data", "c");
  put("v5.data", "e");
  put("v6.data", "f");
  put("v5.meta", format_meta(closed));
  put(journal_file_name(1), journal_description(1, format_meta(closed)) +
                                journal_description(2, format_meta(open)) +
                                journal_description(3, wire::kLeaseMeta) +
                                journal_description(4, format_meta(closed)) +  // no data
                                journal_description(5, wire::kLeaseMeta) +     // its .meta wins
                                journal_description(6, "damaged\n"));
  auto found = closed_staged_versions(dir);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].path, "/ck/a.bin");  // the .meta files first
  EXPECT_EQ(found[0].meta, dir + "/v5.meta");
  EXPECT_EQ(found[1].path, "/ck/a.bin");
  EXPECT_NE(found[1].meta.find("journal"), std::string::npos);
  EXPECT_EQ(found[2].path, "");  // unreadable: reported, not committed
  EXPECT_NE(found[2].meta.find("(v6)"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ckptfwd::cli
