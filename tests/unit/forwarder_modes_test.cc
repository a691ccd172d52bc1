// Permission bits of captured files: the version's mode at OPEN, CHMOD of a staged or a
// committed path, and an fchmod on the staged fd that the forwarder only sees at CLOSE.
#include "forwarder_test_util.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd::test {

namespace {
unsigned file_mode(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

std::string stat_mode(Client& c, const std::string& path) {
  auto r = c.call({"STAT", path});
  return r.size() >= 3 && r[0] == "OK" ? r[2] : "<" + (r.empty() ? "" : r[0]) + ">";
}

uint32_t catalog_mode(const std::string& store, const std::string& path) {
  Catalog cat;
  std::string err;
  if (!cat.load(store, &err) || !cat.find(path)) return 0;
  return cat.find(path)->mode;
}
}  // namespace

TEST_F(ForwarderTest, StagedFilesStayPrivateWhateverTheVersionMode) {
  start();
  auto c = client();
  std::string p = data_ + "/ro";
  auto r = c->call({"OPEN", p, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "444"});
  ASSERT_EQ(r[0], "OK");
  EXPECT_EQ(file_mode(r[2]), 0600u) << "staged files are private";
  EXPECT_EQ(stat_mode(*c, p), "444");
  ASSERT_EQ(c->call({"CLOSE", r[1], "0"})[0], "OK");
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  EXPECT_EQ(catalog_mode(store(), p), 0444u);
}

TEST_F(ForwarderTest, ChmodOfStagedVersionSticksThroughCommit) {
  cfg_.batch_window_ms = 60000;
  start();
  auto c = client();
  std::string p = data_ + "/f";
  auto r = c->call({"OPEN", p, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "600"});
  ASSERT_EQ(r[0], "OK");
  EXPECT_EQ(c->call({"CHMOD", p, "755"})[0], "OK");  // fchmod while open (tar -x)
  EXPECT_EQ(stat_mode(*c, p), "755");
  EXPECT_EQ(file_mode(r[2]), 0600u);
  ASSERT_EQ(c->call({"CLOSE", r[1], "0"})[0], "OK");
  EXPECT_EQ(c->call({"CHMOD", p, "750"})[0], "OK");  // chmod after close, before commit
  EXPECT_EQ(stat_mode(*c, p), "750");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(catalog_mode(store(), p), 0750u);
  EXPECT_EQ(c->call({"CHMOD", data_ + "/unknown", "600"})[0], "PASS");
  EXPECT_EQ(c->call({"CHMOD", p, "99"})[0], "ERR");  // not octal: malformed
}

TEST_F(ForwarderTest, ChmodOfCommittedFileAppendsAManifestRecord) {
  start();
  auto c = client();
  std::string p = data_ + "/f";
  write_version(*c, p, "bytes");
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  EXPECT_EQ(catalog_mode(store(), p), 0644u);
  EXPECT_EQ(c->call({"CHMOD", p, "600"})[0], "OK");
  EXPECT_EQ(stat_mode(*c, p), "600");
  EXPECT_EQ(catalog_mode(store(), p), 0600u) << "the CLI's restore reads the manifest";
  EXPECT_EQ(read_through(*c, p), "bytes");
  // A reopen starts from the committed version and keeps its mode.
  write_version(*c, p, "more", O_WRONLY | O_APPEND);
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  EXPECT_EQ(catalog_mode(store(), p), 0600u);
  EXPECT_EQ(read_through(*c, p), "bytesmore");
}

TEST_F(ForwarderTest, FchmodOnTheStagedFdIsTakenAtClose) {
  start();
  auto c = client();
  std::string p = data_ + "/tar755";
  auto r = c->call({"OPEN", p, std::to_string(O_WRONLY | O_CREAT | O_EXCL), "600"});
  ASSERT_EQ(r[0], "OK");
  int fd = ::open(r[2].c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "x", 1), 1);
  ASSERT_EQ(::fchmod(fd, 0755), 0);  // the library passed it through, nobody told us
  ::close(fd);
  ASSERT_EQ(c->call({"CLOSE", r[1], "1"})[0], "OK");
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  EXPECT_EQ(catalog_mode(store(), p), 0755u);
  EXPECT_EQ(stat_mode(*c, p), "755");
}

}  // namespace ckptfwd::fwd::test
