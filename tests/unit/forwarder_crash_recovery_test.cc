// The recovery protocol after a forwarder crash (forwarder/staging/staging.h): only versions whose
// .meta says closed are committed; open ones wait for their writers (who may CLOSE them
// on a new connection) or are kept as written when those are gone; staged files without a
// .meta (a copy in progress) are deleted.
#include <signal.h>
#include <sys/wait.h>

#include <fstream>

#include "forwarder/staging/staging.h"
#include "forwarder_test_util.h"
#include "store/container/container.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd::test {
namespace {

// A child process that lives until killed: a writer that survived the forwarder.
struct LiveWriter {
  pid_t pid = fork();
  LiveWriter() {
    if (pid == 0) {
      pause();
      _exit(0);
    }
  }
  void kill_now() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      pid = -1;
    }
  }
  ~LiveWriter() { kill_now(); }
};

}  // namespace

class CrashRecoveryTest : public ForwarderTest {
 protected:
  // Leaves a staged version vid of path with bytes, as a killed forwarder would have.
  void leave(int vid, const std::string& path, const std::string& bytes, VersionMeta m) {
    fs::create_directories(paths_.dir);
    chmod(paths_.dir, 0700);
    std::string base = std::string(paths_.dir) + "/v" + std::to_string(vid);
    write_file(base + ".data", bytes);
    m.path = path;
    std::string err;
    ASSERT_TRUE(write_meta(base + ".meta", m, &err)) << err;
  }
  // Leaves vid as a version still open for writer (one reference), then starts the
  // forwarder and drains: what is committed then is what recovery decided on its own.
  void leave_open_and_start(int vid, const std::string& path, const std::string& bytes,
                            pid_t writer) {
    VersionMeta open{"", 0, 0600, writer};
    open.holders = {{writer, 1}};
    leave(vid, path, bytes, open);
    start();
    EXPECT_EQ(client()->call({"DRAIN"})[0], "OK");
  }
  const CatalogEntry* committed(const std::string& path) {
    std::string err;
    cat_ = Catalog();
    if (!cat_.load(store(), &err)) return nullptr;
    return cat_.find(path);
  }
  Catalog cat_;
};

TEST(VersionMetaTest, RoundTripsStateCloserAndHolders) {
  std::string dir = fs::temp_directory_path() / ("ckf-meta-" + std::to_string(getpid()));
  fs::create_directories(dir);
  VersionMeta m{"/a/b", 3, 0640, 77};
  m.holders = {{100, 2}, {200, 1}};
  std::string err;
  ASSERT_TRUE(write_meta(dir + "/m", m, &err)) << err;
  VersionMeta r;
  ASSERT_TRUE(read_meta(dir + "/m", r, &err)) << err;
  EXPECT_FALSE(r.closed);
  EXPECT_EQ(r.holders, m.holders);
  m.closed = true;
  m.closer = 100;
  ASSERT_TRUE(write_meta(dir + "/m", m, &err));
  VersionMeta c;
  ASSERT_TRUE(read_meta(dir + "/m", c, &err));
  EXPECT_TRUE(c.closed);
  EXPECT_EQ(c.closer, 100);
  EXPECT_TRUE(c.holders.empty());
  m.whole = 4096;  // extents [0, 4096) handed over inline at CLOSE
  ASSERT_TRUE(write_meta(dir + "/m", m, &err));
  VersionMeta w;
  ASSERT_TRUE(read_meta(dir + "/m", w, &err));
  EXPECT_EQ(w.whole, 4096);
  EXPECT_EQ(c.whole, -1) << "none written: none read";
  // Junk in the holders line stops the list, never crashes.
  write_file(dir + "/m", "path=/x\nholders=12:1,zz,13\nstate=open\n");
  VersionMeta j;
  ASSERT_TRUE(read_meta(dir + "/m", j, &err));
  EXPECT_EQ(j.holders, (std::vector<std::pair<long, int>>{{12, 1}}));
  fs::remove_all(dir);
}

TEST(VersionMetaTest, WrittenInPlaceAShorterOneKeepsNoLineOfTheOld) {
  std::string dir = fs::temp_directory_path() / ("ckf-meta-ip-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string path = dir + "/v1.meta", err;
  VersionMeta open{"/ckpt/a-rather-long-name-of-a-checkpoint-file.h5", 3, 0640, 77};
  open.holders = {{100, 2}, {200, 1}, {300, 4}};
  ASSERT_TRUE(write_meta(path, open, &err, MetaWrite::kFresh)) << err;
  // Closed and renamed to a shorter name: the new text is shorter than the old.
  VersionMeta closed{"/ckpt/b", 3, 0640, 77};
  closed.closed = true;
  closed.closer = 100;
  ASSERT_TRUE(write_meta(path, closed, &err, MetaWrite::kInPlace)) << err;
  VersionMeta r;
  ASSERT_TRUE(read_meta(path, r, &err)) << err;
  EXPECT_EQ(r.path, "/ckpt/b");
  EXPECT_TRUE(r.closed);
  EXPECT_EQ(r.closer, 100);
  EXPECT_TRUE(r.holders.empty()) << "a line of the longer old text survived";
  // kFresh over an existing .meta: written as a replacement instead.
  VersionMeta other{"/ckpt/c", 1, 0600, 5};
  ASSERT_TRUE(write_meta(path, other, &err, MetaWrite::kFresh)) << err;
  VersionMeta o;
  ASSERT_TRUE(read_meta(path, o, &err)) << err;
  EXPECT_EQ(o.path, "/ckpt/c");
  EXPECT_FALSE(o.closed);
  fs::remove_all(dir);
}

TEST_F(CrashRecoveryTest, AnEmptyMetaIsAnOpenThatNeverRepliedAndIsDeleted) {
  // Killed between creating a new version's .meta and writing it (MetaWrite::kFresh).
  fs::create_directories(paths_.dir);
  chmod(paths_.dir, 0700);
  std::string base = std::string(paths_.dir) + "/v31";
  write_file(base + ".data", "never acknowledged");
  write_file(base + ".meta", "");
  start();
  auto c = client();
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_FALSE(fs::exists(base + ".data")) << "left in place as an unreadable version";
  EXPECT_FALSE(fs::exists(base + ".meta"));
}

TEST_F(CrashRecoveryTest, ClosedVersionIsCommittedOpenOneWaitsForItsWriter) {
  LiveWriter w;
  ASSERT_GT(w.pid, 0);
  VersionMeta closed{"", 0, 0600, 999};
  closed.closed = true;
  leave(11, data_ + "/closed", "closed bytes", closed);
  leave_open_and_start(12, data_ + "/open", "half of it", w.pid);
  auto c = client();
  EXPECT_NE(committed(data_ + "/closed"), nullptr);
  EXPECT_EQ(committed(data_ + "/open"), nullptr) << "an open version was committed";
  // The writer goes on into its staged file and closes on a new connection.
  write_file(std::string(paths_.dir) + "/v12.data", "half of it, and the rest");
  auto wc = client();
  ASSERT_EQ(wc->call({"HELLO", std::to_string(w.pid), "0"})[0], "OK");
  EXPECT_EQ(wc->call({"CLOSE", "12", "24"})[0], "OK");
  EXPECT_EQ(wc->call({"WAITALL"})[0], "OK");
  ASSERT_NE(committed(data_ + "/open"), nullptr);
  EXPECT_EQ(read_through(*c, data_ + "/open"), "half of it, and the rest");
}

// Killed after the record of a version was durable and before its staged files were
// removed: the next forwarder finds them, and the store's live version is that very one
// (the container's entry has its version id, size and time). Committing it again would be
// a second record and container of one version (seen with forwarders killed on GlusterFS).
TEST_F(CrashRecoveryTest, AVersionCommittedBeforeTheCrashIsNotCommittedAgain) {
  VersionMeta closed{"", 0, 0600, 999};
  closed.closed = true;
  leave(11, data_ + "/done", "committed bytes", closed);
  const std::string base = std::string(paths_.dir) + "/v11", keep = root_ + "/kept-v11";
  ASSERT_EQ(::link((base + ".data").c_str(), (keep + ".data").c_str()), 0);
  ASSERT_EQ(::link((base + ".meta").c_str(), (keep + ".meta").c_str()), 0);
  start();
  EXPECT_EQ(client()->call({"DRAIN"})[0], "OK");
  ASSERT_NE(committed(data_ + "/done"), nullptr);
  stop();
  // The staged files as the killed forwarder left them (same inode: same time).
  fs::create_directories(paths_.dir);
  chmod(paths_.dir, 0700);
  ASSERT_EQ(::link((keep + ".data").c_str(), (base + ".data").c_str()), 0);
  ASSERT_EQ(::link((keep + ".meta").c_str(), (base + ".meta").c_str()), 0);
  // And a version of another path that was not committed yet, next to it.
  leave(12, data_ + "/not-yet", "new bytes", closed);
  start();
  EXPECT_EQ(client()->call({"DRAIN"})[0], "OK");
  ASSERT_NE(committed(data_ + "/not-yet"), nullptr) << "the uncommitted one was dropped";
  std::string text;
  {
    std::ifstream in(store() + "/MANIFEST");
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  size_t n = 0;
  for (size_t at = 0; (at = text.find(data_ + "/done\t", at)) != std::string::npos; ++at) ++n;
  EXPECT_EQ(n, 1u) << "records of the one version:\n" << text;
  EXPECT_FALSE(fs::exists(base + ".data")) << "its staged copy was not removed";
  auto c = client();
  EXPECT_EQ(read_through(*c, data_ + "/done"), "committed bytes");
}

TEST_F(CrashRecoveryTest, OpenVersionOfAWriterThatDiesIsKeptAsWritten) {
  LiveWriter w;
  leave_open_and_start(5, data_ + "/died", "as far as it got", w.pid);
  auto c = client();
  EXPECT_EQ(committed(data_ + "/died"), nullptr);
  w.kill_now();
  const CatalogEntry* e = nullptr;
  for (int i = 0; i < 100 && !e; ++i) {  // the reaper looks every 250 ms
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    c->call({"DRAIN"});
    e = committed(data_ + "/died");
  }
  ASSERT_NE(e, nullptr) << "the version of a dead writer was never committed";
  EXPECT_EQ(read_through(*c, data_ + "/died"), "as far as it got");
}

TEST_F(CrashRecoveryTest, StagedFileWithoutMetaIsACopyInProgressAndDeleted) {
  fs::create_directories(paths_.dir);
  chmod(paths_.dir, 0700);
  write_file(std::string(paths_.dir) + "/v9.data", "half a copy");
  start();
  auto c = client();
  EXPECT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_FALSE(fs::exists(std::string(paths_.dir) + "/v9.data"));
  EXPECT_FALSE(fs::exists(store() + "/MANIFEST")) << "something was committed";
}

TEST_F(CrashRecoveryTest, CloseOfAnUnknownVersionIsAnErrorNotOk) {
  start();
  auto c = client();
  EXPECT_EQ(c->call({"CLOSE", "4242", "10"}),
            (std::vector<std::string>{"ERR", std::to_string(ESTALE)}));
}

TEST_F(CrashRecoveryTest, ExitWaitOnANewConnectionWaitsForWhatTheProcessClosedBefore) {
  LiveWriter w;
  cfg_.batch_window_ms = 60000;  // nothing commits on its own during the test
  start();
  auto a = client();
  ASSERT_EQ(a->call({"HELLO", std::to_string(w.pid), "0"})[0], "OK");
  std::string vid = write_version(*a, data_ + "/w", "waited for");
  a.reset();  // the connection is lost, the process lives on
  // The forwarder notices the hang-up on its own thread; give it that moment (the library
  // reconnects only after its call failed, so a real client is never faster than this).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto b = client();
  ASSERT_EQ(b->call({"HELLO", std::to_string(w.pid), "0"})[0], "OK");
  EXPECT_EQ(b->call({"WAITALL"})[0], "OK");
  EXPECT_NE(committed(data_ + "/w"), nullptr) << "WAITALL on the new connection returned early";
}

// A closed shared version whose writer handed its extents over inline ("whole=", no
// extents file): recovered from its .meta, it commits exactly that prefix, not the staged
// file's data pages (which may hold bytes another node wrote).
TEST_F(CrashRecoveryTest, AWholePrefixInTheMetaIsCommittedExactly) {
  VersionMeta closed{"", 0, 0600, 999};
  closed.closed = true;
  closed.partial = true;
  closed.whole = 100;
  std::string bytes = std::string(100, 'p') + std::string(50, '\0') + "NOT-MINE";
  leave(21, data_ + "/prefix", bytes, closed);
  start();
  auto c = client();
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  const CatalogEntry* e = committed(data_ + "/prefix");
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(e->overlays.size(), 1u);
  ContainerReader r;
  std::string err;
  ASSERT_TRUE(r.open(store() + "/" + e->overlays[0].container, &err)) << err;
  const auto& ranges = r.files()[e->overlays[0].file_index].ranges;
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].file_off, 0u);
  EXPECT_EQ(ranges[0].len, 100u);
}

}  // namespace ckptfwd::fwd::test
