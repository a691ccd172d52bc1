// Concurrent writers of one path share one version (POSIX: two opens of one file see one
// file): OPEN of a path open for writing joins its version; it closes with its last writer.
#include "forwarder_test_util.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd::test {

namespace {
std::vector<std::string> open_w(Client& c, const std::string& path,
                                int flags = O_WRONLY | O_CREAT) {
  return c.call({"OPEN", path, std::to_string(flags), "644"});
}

void pwrite_at(const std::string& staged, const std::string& bytes, off_t off) {
  int fd = ::open(staged.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), off), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

std::string stats_field(Client& c, const std::string& key) {
  auto js = c.call({"STATS"});
  std::string k = "\"" + key + "\":";
  size_t p = js.size() > 1 ? js[1].find(k) : std::string::npos;
  if (p == std::string::npos) return "?";
  p += k.size();
  return js[1].substr(p, js[1].find_first_of(",}", p) - p);
}
}  // namespace

TEST_F(ForwarderTest, ConcurrentWritersOfOnePathShareOneVersion) {
  start();
  auto a = client(), b = client();
  std::string p = data_ + "/shared.bin";
  auto ra = open_w(*a, p);
  ASSERT_EQ(ra[0], "OK");
  auto rb = open_w(*b, p);
  ASSERT_EQ(rb[0], "OK");
  EXPECT_EQ(rb[1], ra[1]) << "second writer must join the open version";
  EXPECT_EQ(rb[2], ra[2]);
  auto ra2 = open_w(*a, p);  // a second open in the same process
  EXPECT_EQ(ra2[1], ra[1]);
  EXPECT_EQ(open_w(*b, p, O_WRONLY | O_CREAT | O_EXCL)[0], "ERR");
  pwrite_at(ra[2], "AAAA", 0);
  pwrite_at(rb[2], "BBBB", 4);
  pwrite_at(ra2[2], "CCCC", 8);
  ASSERT_EQ(a->call({"CLOSE", ra[1], "0"})[0], "OK");
  ASSERT_EQ(a->call({"CLOSE", ra2[1], "0"})[0], "OK");
  ASSERT_EQ(a->call({"WAITALL"})[0], "OK");
  // b still writes: nothing is captured or committed yet.
  EXPECT_EQ(stats_field(*a, "files_captured"), "0");
  pwrite_at(rb[2], "DDDD", 12);
  ASSERT_EQ(b->call({"CLOSE", rb[1], "0"})[0], "OK");
  ASSERT_EQ(b->call({"WAITALL"})[0], "OK");
  EXPECT_EQ(stats_field(*a, "files_captured"), "1");
  EXPECT_EQ(stats_field(*a, "files_committed"), "1");
  EXPECT_EQ(read_through(*a, p), "AAAABBBBCCCCDDDD");
  // A new open after the last close starts a new version from those bytes.
  auto rc = open_w(*a, p);
  EXPECT_NE(rc[1], ra[1]);
}

TEST_F(ForwarderTest, TruncatingJoinTruncatesTheSharedFile) {
  start();
  auto a = client(), b = client();
  std::string p = data_ + "/t.bin";
  auto ra = open_w(*a, p);
  pwrite_at(ra[2], "old bytes", 0);
  auto rb = open_w(*b, p, O_WRONLY | O_CREAT | O_TRUNC);
  ASSERT_EQ(rb[1], ra[1]);
  EXPECT_EQ(read_file(ra[2]), "");
  pwrite_at(rb[2], "new", 0);
  ASSERT_EQ(b->call({"CLOSE", rb[1], "3"})[0], "OK");
  ASSERT_EQ(a->call({"CLOSE", ra[1], "3"})[0], "OK");
  ASSERT_EQ(a->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(read_through(*a, p), "new");
}

TEST_F(ForwarderTest, DisconnectReleasesOnlyThatWritersReferences) {
  start();
  auto b = client();
  std::string p = data_ + "/d.bin";
  std::string vid;
  {
    auto a = client();
    auto ra = open_w(*a, p);
    vid = ra[1];
    ASSERT_EQ(open_w(*b, p)[1], vid);
    pwrite_at(ra[2], "aa", 0);
  }  // a goes away with its reference open
  for (int i = 0; i < 100 && stats_field(*b, "files_captured") == "0"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(stats_field(*b, "files_captured"), "0") << "b still writes it";
  auto rb = open_w(*b, p);
  ASSERT_EQ(rb[1], vid);
  pwrite_at(rb[2], "bb", 2);
  ASSERT_EQ(b->call({"CLOSE", vid, "4"})[0], "OK");
  EXPECT_EQ(stats_field(*b, "files_captured"), "0") << "b's first open is still open";
  ASSERT_EQ(b->call({"CLOSE", vid, "4"})[0], "OK");
  ASSERT_EQ(b->call({"WAITALL"})[0], "OK");
  EXPECT_EQ(read_through(*b, p), "aabb");
  EXPECT_EQ(stats_field(*b, "files_captured"), "1");
}

}  // namespace ckptfwd::fwd::test
