// End to end in one process: versions written through the protocol become containers on
// the store whose restore gives the same bytes; reopen, stat, read views, stats.
#include <atomic>
#include <map>
#include <thread>

#include "base/monotonic.h"
#include "forwarder_test_util.h"
#include "store/container/container.h"
#include "store/manifest/manifest.h"
#include "wire/activity.h"

namespace ckptfwd::fwd::test {

TEST_F(ForwarderTest, OpenCloseWaitallCommitsRestorableContainer) {
  cfg_.prefetch_bytes = 0;  // restores counts the two views read here (prefetch: its own test)
  start();
  auto c = client();
  ASSERT_EQ(c->call({"HELLO", "123", "3"})[0], "OK");
  std::string a = payload(10000, 1), b = payload(5000, 2);
  write_version(*c, data_ + "/r0.bin", a);
  write_version(*c, data_ + "/r1.bin", b);
  write_version(*c, data_ + "/empty.bin", "");
  ASSERT_EQ(c->call({"WAITALL"}), std::vector<std::string>{"OK"});

  Catalog cat;
  std::string err;
  ASSERT_TRUE(cat.load(store(), &err)) << err;
  const std::map<std::string, std::string> want = {
      {data_ + "/r0.bin", a}, {data_ + "/r1.bin", b}, {data_ + "/empty.bin", ""}};
  for (auto& [path, bytes] : want) {
    const CatalogEntry* e = cat.find(path);
    ASSERT_NE(e, nullptr) << path;
    EXPECT_EQ(e->size, bytes.size());
    ContainerReader r;
    ASSERT_TRUE(r.open(store() + "/" + e->container, &err)) << err;
    std::vector<uint8_t> got;
    ASSERT_TRUE(r.read_file(e->file_index, got, &err)) << err;
    EXPECT_EQ(std::string(got.begin(), got.end()), bytes) << path;
    EXPECT_EQ(r.files()[e->file_index].rank, 3);
  }
  // Staged files are gone once committed; the captured paths are not real files.
  for (auto& entry : fs::directory_iterator(paths_.dir))
    EXPECT_NE(entry.path().filename().string()[0], 'v') << entry.path();
  EXPECT_FALSE(fs::exists(data_ + "/r0.bin"));
  // Readers see the committed bytes through a read view.
  EXPECT_EQ(read_through(*c, data_ + "/r0.bin"), a);
  EXPECT_EQ(read_through(*c, data_ + "/empty.bin"), "");
  auto st = c->call({"STAT", data_ + "/r1.bin"});
  ASSERT_EQ(st.size(), 5u);
  EXPECT_EQ(st[0], "OK");
  EXPECT_EQ(st[1], std::to_string(b.size()));
  EXPECT_EQ(st[2], "644");
  EXPECT_EQ(c->call({"STAT", data_ + "/nope"})[0], "PASS");
  EXPECT_EQ(read_through(*c, data_ + "/nope"), "<PASS>");

  auto js = c->call({"STATS"});
  ASSERT_EQ(js.size(), 2u);
  EXPECT_NE(js[1].find("\"files_committed\":3"), std::string::npos) << js[1];
  EXPECT_NE(js[1].find("\"bytes_captured\":15000"), std::string::npos) << js[1];
  EXPECT_NE(js[1].find("\"restores\":2"), std::string::npos) << js[1];
  EXPECT_NE(js[1].find("\"containers_written\":1"), std::string::npos) << js[1];
}

TEST_F(ForwarderTest, StagedVersionIsVisibleBeforeCommit) {
  cfg_.batch_window_ms = 60000;  // nothing commits unless someone waits
  start();
  auto c = client();
  std::string a = payload(3000, 3);
  write_version(*c, data_ + "/f", a);
  EXPECT_EQ(read_through(*c, data_ + "/f"), a);
  auto st = c->call({"STAT", data_ + "/f"});
  ASSERT_EQ(st[0], "OK");
  EXPECT_EQ(st[1], "3000");
  EXPECT_FALSE(fs::exists(store() + "/MANIFEST"));
  EXPECT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_TRUE(fs::exists(store() + "/MANIFEST"));
}

TEST_F(ForwarderTest, ReaderOfStagedPathSurvivesCommit) {
  cfg_.batch_window_ms = 60000;
  timing_.retire_grace = std::chrono::milliseconds(300);
  start();
  auto c = client();
  std::string a = payload(2000, 9), p = data_ + "/race";
  std::string vid = write_version(*c, p, a);
  auto r = c->call({"OPEN", p, std::to_string(O_RDONLY), "0"});
  ASSERT_EQ(r[0], "OK");
  EXPECT_EQ(r[2], std::string(paths_.dir) + "/v" + vid + ".data");
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  // Committed, yet the path the reader was handed still opens for a moment.
  EXPECT_EQ(read_file(r[2]), a);
  EXPECT_FALSE(fs::exists(std::string(paths_.dir) + "/v" + vid + ".meta"));
  for (int i = 0; i < 100 && fs::exists(r[2]); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(fs::exists(r[2]));
  EXPECT_EQ(read_through(*c, p), a);
}

// A committed version's staged file is deleted after the retire grace, but not while a
// process of the node writes (its activity word, wire/activity.h, is recent): freeing a
// large file's pages would compete with the application's own page allocations.
TEST_F(ForwarderTest, RetiredStagedFileWaitsWhileTheApplicationWrites) {
  cfg_.batch_window_ms = 60000;
  timing_.retire_grace = std::chrono::milliseconds(100);
  start();
  auto c = client();
  std::string vid = write_version(*c, data_ + "/f", payload(5000, 2));
  const std::string data = std::string(paths_.dir) + "/v" + vid + ".data";
  // The application writes (the word stored every 5 ms, as the library does) for 700 ms.
  const std::string word_file = std::string(paths_.dir) + "/" + activity::kFileName;
  std::atomic<bool> writing{true};
  std::thread app([&] {
    int fd = ::open(word_file.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    const int64_t end = monotonic_ns() + 700'000'000;
    while (monotonic_ns() < end) {
      uint64_t now = static_cast<uint64_t>(monotonic_ns());
      ASSERT_EQ(::pwrite(fd, &now, sizeof(now), activity::kClockOffset), 8);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::close(fd);
    writing = false;
  });
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  std::this_thread::sleep_for(std::chrono::milliseconds(450));  // the grace is over
  EXPECT_TRUE(writing.load());
  EXPECT_TRUE(fs::exists(data)) << "deleted while the application wrote";
  app.join();
  for (int i = 0; i < 100 && fs::exists(data); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(fs::exists(data)) << "never deleted once the application stopped";
}

TEST_F(ForwarderTest, ReopenStartsFromCurrentBytes) {
  start();
  auto c = client();
  std::string a = payload(7000, 4), tail = payload(1000, 5);
  std::string path = data_ + "/app.log";
  write_version(*c, path, a);
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  // Committed -> the new version starts from the container's bytes.
  write_version(*c, path, tail, O_WRONLY | O_APPEND);
  EXPECT_EQ(read_through(*c, path), a + tail);  // staged, not committed yet
  // Staged -> the next version starts from the staged bytes.
  write_version(*c, path, tail, O_WRONLY | O_APPEND);
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  EXPECT_EQ(read_through(*c, path), a + tail + tail);
  // O_TRUNC starts empty.
  write_version(*c, path, "x", O_WRONLY | O_TRUNC);
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  EXPECT_EQ(read_through(*c, path), "x");
}

TEST_F(ForwarderTest, RealFileIsTheStartingPoint) {
  start();
  auto c = client();
  std::string path = data_ + "/old.bin";
  write_file(path, "0123456789");
  chmod(path.c_str(), 0640);
  write_version(*c, path, "AB", O_RDWR);
  EXPECT_EQ(read_through(*c, path), "AB23456789");
  auto st = c->call({"STAT", path});
  EXPECT_EQ(st[2], "640");
}

TEST_F(ForwarderTest, OpenErrorsMatchPosix) {
  start();
  auto c = client();
  std::string wr = std::to_string(O_WRONLY);
  EXPECT_EQ(c->call({"OPEN", data_ + "/missing", wr, "644"}),
            (std::vector<std::string>{"ERR", std::to_string(ENOENT)}));
  EXPECT_EQ(c->call({"OPEN", data_ + "/nodir/f", std::to_string(O_WRONLY | O_CREAT), "644"}),
            (std::vector<std::string>{"ERR", std::to_string(ENOENT)}));
  write_version(*c, data_ + "/e", "e");
  EXPECT_EQ(c->call({"OPEN", data_ + "/e", std::to_string(O_WRONLY | O_CREAT | O_EXCL), "644"}),
            (std::vector<std::string>{"ERR", std::to_string(EEXIST)}));
  EXPECT_EQ(c->call({"OPEN", "relative/path", wr, "644"})[0], "ERR");
  EXPECT_EQ(c->call({"BOGUS"})[0], "ERR");
  EXPECT_EQ(c->call({"CLOSE", "notanumber", "1"})[0], "ERR");
}

TEST_F(ForwarderTest, SyncOfOpenVersionCommitsSnapshot) {
  cfg_.batch_window_ms = 60000;
  start();
  auto c = client();
  std::string path = data_ + "/s";
  auto r = c->call({"OPEN", path, std::to_string(O_WRONLY | O_CREAT), "600"});
  ASSERT_EQ(r[0], "OK");
  int fd = ::open(r[2].c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "first", 5), 5);
  EXPECT_EQ(c->call({"SYNC", r[1]})[0], "OK");
  Catalog cat;
  std::string err;
  ASSERT_TRUE(cat.load(store(), &err));
  ASSERT_NE(cat.find(path), nullptr);
  EXPECT_EQ(cat.find(path)->size, 5u);
  // The open version is still the newest one.
  ASSERT_EQ(::write(fd, "second", 6), 6);
  EXPECT_EQ(read_through(*c, path), "firstsecond");
  ::close(fd);
  EXPECT_EQ(c->call({"CLOSE", r[1], "11"})[0], "OK");
  EXPECT_EQ(c->call({"SYNC", r[1]})[0], "OK");
  ASSERT_TRUE(cat.load(store(), &err));
  EXPECT_EQ(cat.find(path)->size, 11u);
  EXPECT_EQ(cat.find(path)->mode, 0600u);
}

TEST_F(ForwarderTest, DisconnectClosesOpenVersions) {
  start();
  std::string path = data_ + "/killed";
  {
    auto c = client();
    auto r = c->call({"OPEN", path, std::to_string(O_WRONLY | O_CREAT), "644"});
    ASSERT_EQ(r[0], "OK");
    write_file(r[2], "partial");
  }  // the rank dies mid-write
  auto c = client();
  EXPECT_EQ(c->call({"DRAIN"})[0], "OK");
  // DRAIN may run before the disconnect is noticed; wait for the commit.
  for (int i = 0; i < 100 && !fs::exists(store() + "/MANIFEST"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(read_through(*c, path), "partial");
}

TEST_F(ForwarderTest, NewestOpenWinsWhenClosedOutOfOrder) {
  cfg_.batch_window_ms = 60000;
  start();
  auto c = client();
  std::string p = data_ + "/two";
  std::string fl = std::to_string(O_WRONLY | O_CREAT | O_TRUNC);
  auto older = c->call({"OPEN", p, fl, "644"});
  auto newer = c->call({"OPEN", p, fl, "644"});
  ASSERT_EQ(older[0], "OK");
  ASSERT_EQ(newer[0], "OK");
  write_file(older[2], "older");
  write_file(newer[2], "newer");
  ASSERT_EQ(c->call({"CLOSE", newer[1], "5"})[0], "OK");
  ASSERT_EQ(c->call({"CLOSE", older[1], "5"})[0], "OK");
  EXPECT_EQ(read_through(*c, p), "newer");
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  EXPECT_EQ(read_through(*c, p), "newer");
}

}  // namespace ckptfwd::fwd::test
