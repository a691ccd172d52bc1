// A store's MANIFEST problems as ls and restore say them (store.h): each reason once with
// its count and line range, not once per line; a MANIFEST none of whose lines is a record
// makes `ls` fail (exit 1, the problem in --json's "problems"), where it listed "0 files"
// and exited 0.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli.h"
#include "store.h"

namespace ckptfwd::cli {
namespace {

TEST(StoreProblems, EachReasonOnceWithItsCountAndLines) {
  std::vector<std::string> p = {"MANIFEST:1: no checksum (torn or foreign line): skipped",
                                "MANIFEST:2: no checksum (torn or foreign line): skipped",
                                "MANIFEST:4: checksum mismatch (corrupt line): skipped",
                                "something else entirely",
                                "MANIFEST:9: no checksum (torn or foreign line): skipped"};
  EXPECT_EQ(
      grouped_problems(p),
      (std::vector<std::string>{
          "MANIFEST: 3 lines (1..9): no checksum (torn or foreign line): skipped",
          "MANIFEST:4: checksum mismatch (corrupt line): skipped", "something else entirely"}));
  EXPECT_TRUE(grouped_problems({}).empty());
}

TEST(StoreProblems, AManifestOfNoRecordFailsLs) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ckptfwd-garbage-" + std::to_string(getpid()));
  fs::create_directories(dir);
  {
    std::ofstream m(dir / "MANIFEST");
    for (int i = 0; i < 40; ++i) m << "aGVsbG8gd29ybGQ" << i << "xyz\n";
  }
  Store st;
  ASSERT_TRUE(open_store(dir.string(), st));
  EXPECT_NE(unreadable_manifest(st), "");
  EXPECT_EQ(grouped_problems(st.catalog.problems()).size(), 1u);
  EXPECT_EQ(cmd_ls({dir.string()}), 1);
  testing::internal::CaptureStdout();
  EXPECT_EQ(cmd_ls({dir.string(), "--json"}), 1);
  const std::string json = testing::internal::GetCapturedStdout();
  EXPECT_NE(json.find("none of its lines is a record"), std::string::npos) << json;
  // An empty MANIFEST is a store with nothing yet, not a lost one.
  std::ofstream(dir / "MANIFEST", std::ios::trunc).close();
  Store empty;
  ASSERT_TRUE(open_store(dir.string(), empty));
  EXPECT_EQ(unreadable_manifest(empty), "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ckptfwd::cli
