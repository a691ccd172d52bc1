// fsync, close, rename (the safe way to write a checkpoint): the fsync commits a snapshot
// of the open version; closing it unchanged must not commit the same bytes a second time.
#include "forwarder_test_util.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd::test {

namespace {
long long stat_num(Client& c, const std::string& key) {
  auto js = c.call({"STATS"});
  std::string k = "\"" + key + "\":";
  size_t p = js.size() > 1 ? js[1].find(k) : std::string::npos;
  return p == std::string::npos ? -1 : std::stoll(js[1].substr(p + k.size()));
}

size_t containers(const std::string& store) {
  size_t n = 0;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(store, ec))
    if (e.path().extension() == ".ckc") ++n;
  return n;
}
}  // namespace

TEST_F(ForwarderTest, CloseUnchangedAfterFsyncDoesNotCommitAgain) {
  cfg_.batch_window_ms = 60000;
  start();
  auto c = client();
  std::string tmp = data_ + "/ck.tmp", fin = data_ + "/ck.bin", bytes = payload(20000, 3);
  auto r = c->call({"OPEN", tmp, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
  ASSERT_EQ(r[0], "OK");
  write_file(r[2], bytes);
  ASSERT_EQ(c->call({"SYNC", r[1]})[0], "OK");
  ASSERT_EQ(c->call({"CLOSE", r[1], std::to_string(bytes.size())})[0], "OK");
  ASSERT_EQ(c->call({"RENAME", tmp, fin})[0], "OK");
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(stat_num(*c, "files_captured"), 1);
  EXPECT_EQ(stat_num(*c, "files_committed"), 1);
  EXPECT_EQ(stat_num(*c, "containers_written"), 1);
  EXPECT_EQ(containers(store()), 1u);
  EXPECT_EQ(read_through(*c, fin), bytes);
  Catalog cat;
  std::string err;
  ASSERT_TRUE(cat.load(store(), &err));
  EXPECT_EQ(cat.entries().size(), 1u);
  ASSERT_NE(cat.find(fin), nullptr);
  EXPECT_EQ(cat.find(fin)->size, bytes.size());
}

TEST_F(ForwarderTest, CloseAfterFsyncWithChangesCommitsTheNewBytes) {
  cfg_.batch_window_ms = 60000;
  start();
  auto c = client();
  std::string p = data_ + "/f";
  auto r = c->call({"OPEN", p, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
  ASSERT_EQ(r[0], "OK");
  write_file(r[2], "AAAA");
  ASSERT_EQ(c->call({"SYNC", r[1]})[0], "OK");
  write_file(r[2], "BBBB");  // same size, other bytes: the hash tells
  ASSERT_EQ(c->call({"CLOSE", r[1], "4"})[0], "OK");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(stat_num(*c, "files_captured"), 2);
  EXPECT_EQ(read_through(*c, p), "BBBB");
  // Unlinked after the fsync: the close must not resurrect it, nor be skipped wrongly.
  auto r2 = c->call({"OPEN", p, std::to_string(O_WRONLY | O_TRUNC), "644"});
  write_file(r2[2], "CCCC");
  ASSERT_EQ(c->call({"SYNC", r2[1]})[0], "OK");
  auto r3 = c->call({"OPEN", data_ + "/g", std::to_string(O_WRONLY | O_CREAT), "644"});
  ASSERT_EQ(c->call({"RENAME", data_ + "/g", p})[0], "OK");  // replaces p's catalog entry
  ASSERT_EQ(c->call({"CLOSE", r2[1], "4"})[0], "OK");
  ASSERT_EQ(c->call({"CLOSE", r3[1], "0"})[0], "OK");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(read_through(*c, p), "");
}

}  // namespace ckptfwd::fwd::test
