// Start-up and shut-down: recovery of staged versions a killed forwarder left, the
// session dir and socket rules, idle exit, store failures.
#include <sys/wait.h>
#include <unistd.h>

#include "forwarder/daemon/session_dir.h"
#include "forwarder/staging/staging.h"
#include "forwarder_test_util.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd::test {
namespace {

// The pid of a process that has exited and been reaped. Recovery keeps an open version
// whose writer is alive (process_alive, orphans.cc) waiting for it; a fixed pid such as
// 999 is alive whenever pids have wrapped past it (pid_max 32768 on a busy build
// machine), which made RecoversLeftoverStagedVersions flaky. Linux hands out pids
// cyclically, so a reaped one comes back only after a full wrap.
long gone_pid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid(pid, nullptr, 0);
  return pid;
}

}  // namespace

TEST_F(ForwarderTest, RecoversLeftoverStagedVersions) {
  fs::create_directories(paths_.dir);
  chmod(paths_.dir, 0700);
  std::string p = data_ + "/lost.bin", bytes = payload(9000, 7);
  write_file(std::string(paths_.dir) + "/v41.data", bytes);
  std::string err;
  // An open version (no state line) of a writer that is gone: committed as written.
  long writer = gone_pid();
  ASSERT_GT(writer, 0);
  ASSERT_TRUE(
      write_meta(std::string(paths_.dir) + "/v41.meta", VersionMeta{p, 2, 0600, writer}, &err));
  write_file(std::string(paths_.dir) + "/v7.meta", "path=/x\n");  // meta without data: dropped
  start();
  auto c = client();
  EXPECT_EQ(c->call({"DRAIN"})[0], "OK");
  Catalog cat;
  ASSERT_TRUE(cat.load(store(), &err));
  ASSERT_NE(cat.find(p), nullptr);
  EXPECT_EQ(cat.find(p)->mode, 0600u);
  EXPECT_EQ(read_through(*c, p), bytes);
  EXPECT_FALSE(fs::exists(std::string(paths_.dir) + "/v41.data"));
  EXPECT_FALSE(fs::exists(std::string(paths_.dir) + "/v7.meta"));
  // New versions never reuse a recovered id.
  auto r = c->call({"OPEN", data_ + "/n", std::to_string(O_WRONLY | O_CREAT), "644"});
  ASSERT_EQ(r[0], "OK");
  EXPECT_GT(std::stoull(r[1]), 41u);
}

TEST_F(ForwarderTest, StoreFailureReportsErrorAndKeepsStagedData) {
  // A store below a regular file can never be created (works even as root).
  write_file(root_ + "/blocker", "x");
  cfg_.store = root_ + "/blocker/store";
  start();
  auto c = client();
  std::string vid = write_version(*c, data_ + "/f", "precious");
  EXPECT_EQ(c->call({"SYNC", vid}), (std::vector<std::string>{"ERR", std::to_string(EIO)}));
  EXPECT_EQ(c->call({"WAITALL"})[0], "ERR");
  EXPECT_EQ(read_file(std::string(paths_.dir) + "/v" + vid + ".data"), "precious");
  EXPECT_EQ(read_through(*c, data_ + "/f"), "precious");
  auto js = c->call({"STATS"});
  EXPECT_EQ(js[1].find("\"errors\":0"), std::string::npos) << js[1];
  // Once the store works, a waiter's retry commits it.
  fs::remove(root_ + "/blocker");
  fs::create_directories(root_ + "/blocker");
  EXPECT_EQ(c->call({"SYNC", vid})[0], "OK");
  Catalog cat;
  std::string err;
  ASSERT_TRUE(cat.load(cfg_.store, &err));
  EXPECT_NE(cat.find(data_ + "/f"), nullptr);
  EXPECT_FALSE(fs::exists(std::string(paths_.dir) + "/v" + vid + ".data"));
}

TEST_F(ForwarderTest, SecondForwarderDefersToLiveOne) {
  start();
  Forwarder other(cfg_, paths_, timing_);
  std::string err;
  EXPECT_EQ(other.start(&err), Forwarder::Start::kOtherRunning);
}

TEST_F(ForwarderTest, StaleSocketIsReplaced) {
  {
    Forwarder first(cfg_, paths_, timing_);
    std::string err;
    ASSERT_EQ(first.start(&err), Forwarder::Start::kReady) << err;
    // Simulate a killed forwarder: the socket file stays but nobody listens.
    std::string keep = std::string(paths_.socket) + ".keep";
    ASSERT_EQ(link(paths_.socket, keep.c_str()), 0);
  }
  std::string keep = std::string(paths_.socket) + ".keep";
  ASSERT_EQ(rename(keep.c_str(), paths_.socket), 0);
  start();
  auto c = client();
  EXPECT_EQ(c->call({"HELLO", "1", "0"})[0], "OK");
}

TEST_F(ForwarderTest, IdleExitRemovesSocketAndAppendsStats) {
  cfg_.idle_exit_s = 1;
  cfg_.stats_file = root_ + "/stats.jsonl";
  start();
  {
    auto c = client();
    write_version(*c, data_ + "/i", "idle");
  }
  auto t0 = std::chrono::steady_clock::now();
  thread_.join();
  auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(secs, 5.0);
  EXPECT_EQ(rc_, 0);
  EXPECT_FALSE(fs::exists(paths_.socket));
  std::string stats = read_file(cfg_.stats_file);
  EXPECT_NE(stats.find("\"source\":\"forwarder\""), std::string::npos) << stats;
  EXPECT_NE(stats.find("\"files_committed\":1"), std::string::npos) << stats;
  EXPECT_EQ(stats.back(), '\n');
  fwd_.reset();
}

TEST_F(ForwarderTest, SessionDirMustBePrivate) {
  std::string err;
  std::string dir = root_ + "/sess";
  ASSERT_TRUE(prepare_session_dir(root_, dir, &err)) << err;
  EXPECT_EQ(fs::status(dir).permissions() & fs::perms::all, fs::perms::owner_all);
  chmod(dir.c_str(), 0755);
  EXPECT_FALSE(prepare_session_dir(root_, dir, &err));
  EXPECT_NE(err.find("chmod 700"), std::string::npos) << err;
  fs::remove(dir);
  write_file(dir, "file");
  EXPECT_FALSE(prepare_session_dir(root_, dir, &err));
}

TEST_F(ForwarderTest, SocketIsPrivate) {
  start();
  struct stat st;
  ASSERT_EQ(stat(paths_.socket, &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

}  // namespace ckptfwd::fwd::test
