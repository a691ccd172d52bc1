// RENAME, UNLINK, LIST, ABANDON: the captured name space, staged and committed.
#include <algorithm>

#include "forwarder_test_util.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd::test {

namespace {
std::vector<std::string> sorted_names(std::vector<std::string> r) {
  if (!r.empty()) r.erase(r.begin());  // "OK"
  std::sort(r.begin(), r.end());
  return r;
}
}  // namespace

TEST_F(ForwarderTest, RenameOfStagedVersionWriteTmpThenRename) {
  cfg_.batch_window_ms = 60000;
  start();
  auto c = client();
  std::string tmp = data_ + "/ckpt.tmp", fin = data_ + "/ckpt.dat";
  write_version(*c, fin, "old");
  write_version(*c, tmp, "new");
  EXPECT_EQ(c->call({"RENAME", tmp, fin})[0], "OK");
  EXPECT_EQ(read_through(*c, fin), "new");
  EXPECT_EQ(c->call({"STAT", tmp})[0], "PASS");
  EXPECT_EQ(sorted_names(c->call({"LIST", data_})), std::vector<std::string>{"ckpt.dat"});
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  Catalog cat;
  std::string err;
  ASSERT_TRUE(cat.load(store(), &err));
  ASSERT_NE(cat.find(fin), nullptr);
  EXPECT_EQ(cat.find(fin)->size, 3u);
  EXPECT_EQ(cat.find(tmp), nullptr);
  EXPECT_EQ(read_through(*c, fin), "new");
}

TEST_F(ForwarderTest, RenameAndUnlinkOfCommittedFiles) {
  start();
  auto c = client();
  std::string a = data_ + "/a", b = data_ + "/b";
  write_version(*c, a, "AAAA");
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  EXPECT_EQ(c->call({"RENAME", a, b})[0], "OK");
  EXPECT_EQ(c->call({"STAT", a})[0], "PASS");
  EXPECT_EQ(read_through(*c, b), "AAAA");
  EXPECT_EQ(sorted_names(c->call({"LIST", data_})), std::vector<std::string>{"b"});
  // The manifest says so too (a new forwarder or the CLI sees the same).
  Catalog cat;
  std::string err;
  ASSERT_TRUE(cat.load(store(), &err));
  EXPECT_EQ(cat.find(a), nullptr);
  ASSERT_NE(cat.find(b), nullptr);
  EXPECT_EQ(c->call({"UNLINK", b})[0], "OK");
  EXPECT_EQ(c->call({"STAT", b})[0], "PASS");
  EXPECT_EQ(c->call({"UNLINK", b})[0], "PASS");
  EXPECT_EQ(c->call({"RENAME", b, a})[0], "PASS");
  ASSERT_TRUE(cat.load(store(), &err));
  EXPECT_TRUE(cat.entries().empty());
}

TEST_F(ForwarderTest, RenameAcrossDirectoriesMovesBetweenStores) {
  start();
  auto c = client();
  fs::create_directories(data_ + "/sub");
  std::string a = data_ + "/a", b = data_ + "/sub/b";
  write_version(*c, a, "cross");
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  EXPECT_EQ(c->call({"RENAME", a, b})[0], "OK");
  EXPECT_EQ(read_through(*c, b), "cross");
  EXPECT_EQ(c->call({"STAT", a})[0], "PASS");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  Catalog cat;
  std::string err;
  ASSERT_TRUE(cat.load(data_ + "/sub/.ckptfwd", &err));
  ASSERT_NE(cat.find(b), nullptr);
  EXPECT_EQ(read_through(*c, b), "cross");
}

TEST_F(ForwarderTest, UnlinkDropsStagedVersions) {
  cfg_.batch_window_ms = 60000;
  start();
  auto c = client();
  std::string p = data_ + "/gone";
  write_version(*c, p, "bytes");
  EXPECT_EQ(c->call({"UNLINK", p})[0], "OK");
  EXPECT_EQ(c->call({"STAT", p})[0], "PASS");
  EXPECT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_FALSE(fs::exists(store() + "/MANIFEST"));
  size_t staged = 0;
  for (auto& e : fs::directory_iterator(paths_.dir))
    staged += e.path().filename().string()[0] == 'v';
  EXPECT_EQ(staged, 0u);
}

TEST_F(ForwarderTest, UnlinkWithRealFilePassesSoLibraryRemovesIt) {
  start();
  auto c = client();
  std::string p = data_ + "/real";
  write_file(p, "on disk");
  write_version(*c, p, "staged", O_WRONLY | O_TRUNC);
  EXPECT_EQ(read_through(*c, p), "staged");
  EXPECT_EQ(c->call({"UNLINK", p})[0], "PASS");
}

TEST_F(ForwarderTest, AbandonHandsThePathBackToTheRealFile) {
  start();
  auto c = client();
  std::string p = data_ + "/fb";
  write_version(*c, p, "committed");
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  auto r = c->call({"OPEN", p, std::to_string(O_WRONLY | O_APPEND), "644"});
  ASSERT_EQ(r[0], "OK");
  EXPECT_EQ(c->call({"ABANDON", r[1]})[0], "OK");
  EXPECT_FALSE(fs::exists(r[2]));
  EXPECT_EQ(c->call({"STAT", p})[0], "PASS");
  auto js = c->call({"STATS"});
  EXPECT_NE(js[1].find("\"fallbacks\":1"), std::string::npos) << js[1];
}

TEST_F(ForwarderTest, ListShowsStagedAndCommittedNamesOfOneDirectory) {
  start();
  auto c = client();
  fs::create_directories(data_ + "/sub");
  write_version(*c, data_ + "/x1", "1");
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  write_version(*c, data_ + "/x2", "2");
  write_version(*c, data_ + "/sub/y", "3");
  EXPECT_EQ(sorted_names(c->call({"LIST", data_})), (std::vector<std::string>{"x1", "x2"}));
  EXPECT_EQ(sorted_names(c->call({"LIST", data_ + "/sub"})), std::vector<std::string>{"y"});
  EXPECT_EQ(sorted_names(c->call({"LIST", data_ + "/none"})), std::vector<std::string>{});
}

}  // namespace ckptfwd::fwd::test
