// infer_hdf5 (schema/hdf5_client.h) against stand-in helpers that fail in each way the
// real one can (missing, crashing, hanging, printing garbage or a bad map), and against
// the real ckptfwd-h5infer when it was built ($CKPTFWD_H5INFER or next to this test
// binary). Every failure must come back as false with a reason naming the file, within
// the time limit, and leave no child process behind.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "schema/hdf5_client.h"

namespace ckptfwd::schema {
namespace {

class Hdf5ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/schema_hdf5_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    file_ = dir_ + "/data.h5";
    std::ofstream(file_) << std::string(4096, 'x');
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  // An executable shell script in the temp dir.
  std::string script(const std::string& name, const std::string& body) {
    std::string p = dir_ + "/" + name;
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    chmod(p.c_str(), 0755);
    return p;
  }

  std::string dir_, file_;
};

// Children of this process, zombies included.
int children() {
  int n = 0;
  DIR* d = opendir("/proc");
  std::string me = std::to_string(getpid());
  while (dirent* e = readdir(d)) {
    std::ifstream st(std::string("/proc/") + e->d_name + "/stat");
    std::string pid, comm, state, ppid;
    if (st >> pid >> comm >> state >> ppid && ppid == me) ++n;
  }
  closedir(d);
  return n;
}

TEST(Hdf5Superblock, FoundAtPowersOfTwoFrom512) {
  const uint8_t sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  std::vector<uint8_t> b(4096, 0);
  EXPECT_EQ(hdf5_superblock_offset(b.data(), b.size()), -1);
  std::copy(sig, sig + 8, b.begin() + 1024);
  EXPECT_EQ(hdf5_superblock_offset(b.data(), b.size()), 1024);
  std::copy(sig, sig + 8, b.begin() + 100);  // not a userblock size
  EXPECT_EQ(hdf5_superblock_offset(b.data(), b.size()), 1024);
  std::copy(sig, sig + 8, b.begin());
  EXPECT_EQ(hdf5_superblock_offset(b.data(), b.size()), 0);
  EXPECT_EQ(hdf5_superblock_offset(b.data(), 7), -1);
  EXPECT_EQ(hdf5_superblock_offset(b.data(), 1031), 0);
}

TEST(Hdf5Helper, DefaultIsNextToTheExecutable) {
  std::string h = default_hdf5_helper();
  EXPECT_EQ(h.substr(h.rfind('/')), "/ckptfwd-h5infer");
  EXPECT_EQ(h.front(), '/');
}

TEST_F(Hdf5ClientTest, MissingHelper) {
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_hdf5(dir_ + "/nope", file_, 4096, 5000, m, &why));
  EXPECT_NE(why.find("helper not found at " + dir_ + "/nope"), std::string::npos) << why;
  EXPECT_NE(why.find("build ckptfwd-h5infer"), std::string::npos) << why;
  EXPECT_NE(why.find(file_), std::string::npos) << why;
}

TEST_F(Hdf5ClientTest, CrashingHelper) {
  std::string h = script("crash", "echo 'about to crash' >&2; kill -SEGV $$");
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_hdf5(h, file_, 4096, 5000, m, &why));
  EXPECT_NE(why.find("crashed with signal 11"), std::string::npos) << why;
  EXPECT_NE(why.find("about to crash"), std::string::npos) << why;
  EXPECT_NE(why.find(file_), std::string::npos) << why;
  EXPECT_EQ(children(), 0);
}

TEST_F(Hdf5ClientTest, FailingHelperReportsFirstStderrLine) {
  std::string h = script("fail", "echo \"$2: H5Fopen failed\" >&2; echo more >&2; exit 3");
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_hdf5(h, file_, 4096, 5000, m, &why));
  EXPECT_NE(why.find("exited with status 3: " + file_ + ": H5Fopen failed"), std::string::npos)
      << why;
  EXPECT_EQ(why.find("more"), std::string::npos) << why;
}

TEST_F(Hdf5ClientTest, HangingHelperTimesOut) {
  // The shell's child sleeps too: the whole process group must go.
  std::string h = script("hang", "sleep 30; echo done");
  VariableMap m;
  std::string why;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(infer_hdf5(h, file_, 4096, 300, m, &why));
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_GE(ms, 300);
  EXPECT_LT(ms, 3000);
  EXPECT_NE(why.find("timed out after 300 ms"), std::string::npos) << why;
  EXPECT_EQ(children(), 0);
}

TEST_F(Hdf5ClientTest, HelperThatClosesItsPipesAndHangsTimesOut) {
  std::string h = script("quiet", "exec >&- 2>&-; exec sleep 30");
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_hdf5(h, file_, 4096, 300, m, &why));
  EXPECT_NE(why.find("timed out"), std::string::npos) << why;
  EXPECT_EQ(children(), 0);
}

TEST_F(Hdf5ClientTest, GarbageOutputRejected) {
  std::string h = script("garbage", "head -c 100000 /dev/urandom");
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_hdf5(h, file_, 4096, 5000, m, &why));
  EXPECT_NE(why.find("bad output"), std::string::npos) << why;
  EXPECT_TRUE(m.vars.empty());
}

TEST_F(Hdf5ClientTest, EndlessOutputIsCutOff) {
  std::string h = script("endless", "exec cat /dev/zero");
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_hdf5(h, file_, 4096, 20000, m, &why));
  EXPECT_NE(why.find("output exceeds"), std::string::npos) << why;
  EXPECT_EQ(children(), 0);
}

// A well-formed map whose extent lies beyond the file: decode_variable_map's checks
// reject it.
TEST_F(Hdf5ClientTest, MapBeyondTheFileRejected) {
  VariableMap bad;
  bad.source = "hdf5";
  Variable v;
  v.name = "/x";
  v.dtype = "U8";
  v.elem_size = 1;
  v.shape = {100};
  v.key = var_key(v.name, v.dtype, 1);
  v.extents.push_back(VarExtent{4000, 100, {0}, {100}, false});
  bad.vars.push_back(v);
  std::vector<uint8_t> enc;
  encode_variable_map(bad, enc);
  std::string blob = dir_ + "/map.bin";
  std::ofstream(blob, std::ios::binary)
      .write(reinterpret_cast<const char*>(enc.data()), static_cast<std::streamsize>(enc.size()));
  std::string h = script("badmap", "cat '" + blob + "'");
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_hdf5(h, file_, 4096, 5000, m, &why));
  EXPECT_NE(why.find("lies beyond the file"), std::string::npos) << why;
  // The same map fits a bigger file.
  EXPECT_TRUE(infer_hdf5(h, file_, 4100, 5000, m, &why)) << why;
  EXPECT_EQ(m, bad);
}

// The helper must not inherit the caller's descriptors (the forwarder's sockets).
TEST_F(Hdf5ClientTest, HelperInheritsNoDescriptors) {
  int fd = open(file_.c_str(), O_RDONLY);  // not close-on-exec, like a careless caller's
  ASSERT_GE(fd, 0);
  ASSERT_EQ(dup2(fd, 77), 77);
  std::string h = script("fds", "echo open: $(ls /proc/$$/fd) >&2; exit 1");
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_hdf5(h, file_, 4096, 5000, m, &why));
  close(77);
  close(fd);
  // The shell's own (its script, the $(...) pipe) are there; the caller's 77 is not.
  EXPECT_NE(why.find("open: 0 1"), std::string::npos) << why;
  EXPECT_EQ(why.find(" 77"), std::string::npos) << why;
}

TEST_F(Hdf5ClientTest, HelperRunsWithoutLdPreload) {
  setenv("LD_PRELOAD", "", 1);
  setenv("CKPTFWD_TEST_MARK", "kept", 1);
  std::string h =
      script("env", "echo \"mark=$CKPTFWD_TEST_MARK preload=${LD_PRELOAD-unset}\" >&2; exit 1");
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_hdf5(h, file_, 4096, 5000, m, &why));
  unsetenv("LD_PRELOAD");
  unsetenv("CKPTFWD_TEST_MARK");
  EXPECT_NE(why.find("mark=kept preload=unset"), std::string::npos) << why;
}

TEST_F(Hdf5ClientTest, ConcurrentCallsAllFinishAndLeaveNoChildren) {
  std::string crash = script("crash", "kill -SEGV $$");
  std::string hang = script("hang", "exec sleep 30");
  std::vector<std::thread> ts;
  std::vector<std::string> whys(8);
  for (int i = 0; i < 8; ++i)
    ts.emplace_back([&, i] {
      VariableMap m;
      infer_hdf5(i % 2 ? crash : hang, file_, 4096, 400, m, &whys[i]);
    });
  for (auto& t : ts) t.join();
  for (int i = 0; i < 8; ++i)
    EXPECT_NE(whys[i].find(i % 2 ? "crashed with signal 11" : "timed out"), std::string::npos)
        << whys[i];
  EXPECT_EQ(children(), 0);
}

// The real helper: $CKPTFWD_H5INFER, else next to this binary (unit test binaries are
// built into the helper's bin directory); "" when it was not built.
std::string real_helper() {
  const char* env = getenv("CKPTFWD_H5INFER");
  std::string h = env && *env ? env : default_hdf5_helper();
  return access(h.c_str(), X_OK) == 0 ? h : "";
}

// tests/integration/data/NAME, found from this source file's path.
std::string data_file(const std::string& name) {
  std::string src = __FILE__;
  return src.substr(0, src.rfind('/')) + "/../integration/data/" + name;
}

TEST_F(Hdf5ClientTest, RealHelperRejectsNonHdf5) {
  std::string h = real_helper();
  if (h.empty()) GTEST_SKIP() << "ckptfwd-h5infer not built";
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_hdf5(h, file_, 4096, 10000, m, &why));
  EXPECT_NE(why.find("exited with status 1"), std::string::npos) << why;
  EXPECT_NE(why.find(file_), std::string::npos) << why;
}

// A v1 B-tree node of a chunk index whose first child is the node itself: libhdf5 1.10.8
// recurses until the stack overflows. The helper dies; the caller reports it.
TEST_F(Hdf5ClientTest, RealHelperCrashInsideLibhdf5IsReported) {
  std::string h = real_helper();
  if (h.empty()) GTEST_SKIP() << "ckptfwd-h5infer not built";
  std::string f = data_file("h5_btree_self_loop_crash.h5");
  struct stat st;
  ASSERT_EQ(stat(f.c_str(), &st), 0) << f;
  VariableMap m;
  std::string why;
  EXPECT_FALSE(infer_hdf5(h, f, static_cast<uint64_t>(st.st_size), 10000, m, &why));
  EXPECT_NE(why.find("crashed with signal 11"), std::string::npos) << why;
  EXPECT_NE(why.find(f), std::string::npos) << why;
  EXPECT_EQ(children(), 0);
}

// B-tree nodes whose children all point to the next node: billions of chunk visits.
TEST_F(Hdf5ClientTest, RealHelperHangInsideLibhdf5TimesOut) {
  std::string h = real_helper();
  if (h.empty()) GTEST_SKIP() << "ckptfwd-h5infer not built";
  std::string f = data_file("h5_btree_fanout_hang.h5");
  struct stat st;
  ASSERT_EQ(stat(f.c_str(), &st), 0) << f;
  VariableMap m;
  std::string why;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(infer_hdf5(h, f, static_cast<uint64_t>(st.st_size), 1000, m, &why));
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_LT(ms, 4000);
  EXPECT_NE(why.find("timed out after 1000 ms"), std::string::npos) << why;
  EXPECT_EQ(children(), 0);
}

}  // namespace
}  // namespace ckptfwd::schema
