// The CLI's store commands, in-process on generated stores: restore byte equality and
// placement, hostile paths never escaping the target, symlinks refused, corrupt files
// failing alone; verify and ls exit codes.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli.h"
#include "core_test_util.h"
#include "restore_paths.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::cli {
namespace {

using test::TempDir;
using test::TestFile;
namespace fs = std::filesystem;

TEST(RestorePaths, OnlyCleanAbsolutePathsPass) {
  std::string why;
  EXPECT_TRUE(check_restore_path("/a/b/c.bin", &why));
  EXPECT_TRUE(check_restore_path("/a/..b/c..", &why)) << "dots inside names are fine";
  const std::vector<std::string> bads = {
      "",       "a/b",   "/",     "/a/../b", "/..",
      "/a/./b", "/a//b", "/a/b/", "/a/..",   std::string("/a\0b", 4)};
  for (const std::string& bad : bads) {
    EXPECT_FALSE(check_restore_path(bad, &why)) << bad;
    EXPECT_FALSE(why.empty());
  }
}

TEST(RestorePaths, CommonDirectoryPrefix) {
  EXPECT_EQ(common_dir_prefix({"/run/ckpt/a", "/run/ckpt/b"}), "/run/ckpt");
  EXPECT_EQ(common_dir_prefix({"/run/ckpt/a", "/run/ckpt/sub/b"}), "/run/ckpt");
  EXPECT_EQ(common_dir_prefix({"/run/ckpt/a"}), "/run/ckpt");
  EXPECT_EQ(common_dir_prefix({"/run/ckpt1/a", "/run/ckpt2/b"}), "/run");
  EXPECT_EQ(common_dir_prefix({"/x/a", "/y/b"}), "");
  EXPECT_EQ(common_dir_prefix({"/a"}), "");
  EXPECT_EQ(destination_of("/run/ckpt/sub/b", "/run/ckpt", false), "sub/b");
  EXPECT_EQ(destination_of("/a", "", false), "a");
  EXPECT_EQ(destination_of("/run/ckpt/a", "/run/ckpt", true), "run/ckpt/a");
}

TEST(RestorePaths, ParentWalkCreatesDirectoriesAndRefusesSymlinks) {
  TempDir dir;
  fs::create_directories(dir / "root");
  fs::create_directories(dir / "outside");
  fs::create_directory_symlink(dir / "outside", dir / "root/link");
  int root = ::open((dir / "root").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(root, 0);
  std::string leaf, why;
  int fd = open_parent_dir(root, "a/b/c/file", &leaf, &why);
  ASSERT_GE(fd, 0) << why;
  ::close(fd);
  EXPECT_EQ(leaf, "file");
  EXPECT_TRUE(fs::is_directory(dir / "root/a/b/c"));
  EXPECT_LT(open_parent_dir(root, "link/file", &leaf, &why), 0);
  EXPECT_NE(why.find("symlink"), std::string::npos) << why;
  for (const char* bad : {"a/../x", "../x", "a/./x", "a//x", "a/..", "", "a/"})
    EXPECT_LT(open_parent_dir(root, bad, &leaf, &why), 0) << bad;
  EXPECT_FALSE(fs::exists(dir / "x"));
  ::close(root);
}

// A store with one container holding `files`, all committed under their own paths.
class StoreTest : public ::testing::Test {
 protected:
  void make_store(std::vector<TestFile> files, const std::string& name = "c-1.ckc") {
    std::string err;
    ASSERT_TRUE(manifest::ensure_store(store_, &err)) << err;
    files_ = files;
    ASSERT_TRUE(test::build_container(store_ + "/" + name, files_, 1, 4096, "zstd", &err)) << err;
    std::vector<CatalogEntry> entries;
    for (size_t i = 0; i < files_.size(); ++i) {
      CatalogEntry e;
      e.path = files_[i].path;
      e.file_index = static_cast<uint32_t>(i);
      e.size = files_[i].content.size();
      e.mode = 0640;
      e.mtime_ns = 1700000000123456789LL;
      entries.push_back(e);
    }
    ASSERT_TRUE(manifest::append_commit(store_, name, entries, &err)) << err;
  }
  TempDir tmp_;
  std::string store_ = tmp_ / "store";
  std::string out_ = tmp_ / "out";
  std::vector<TestFile> files_;
};

std::vector<TestFile> three_files() {
  return {{"/run/ckpt/r0.bin", test::smooth_bytes(30000, 1), {}, 0},
          {"/run/ckpt/r1.bin", test::random_bytes(20000, 2), {}, 0},
          {"/run/ckpt/sub/r2.bin", test::smooth_bytes(10000, 3), {}, 0}};
}

TEST_F(StoreTest, RestoreStripsTheCommonPrefixAndKeepsModeAndBytes) {
  make_store(three_files());
  EXPECT_EQ(cmd_restore({store_, "--to", out_}), 0);
  EXPECT_EQ(test::read_all(out_ + "/r0.bin"), files_[0].content);
  EXPECT_EQ(test::read_all(out_ + "/r1.bin"), files_[1].content);
  EXPECT_EQ(test::read_all(out_ + "/sub/r2.bin"), files_[2].content);
  struct stat st;
  ASSERT_EQ(::stat((out_ + "/r0.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_mtim.tv_sec, 1700000000);
  // No temporaries left behind.
  size_t n = 0;
  for (auto& e : fs::recursive_directory_iterator(out_)) n += e.is_regular_file();
  EXPECT_EQ(n, 3u);
}

TEST_F(StoreTest, RestoreFullPathsAndSelectedPaths) {
  make_store(three_files());
  EXPECT_EQ(cmd_restore({store_, "--to", out_, "--full-paths"}), 0);
  EXPECT_EQ(test::read_all(out_ + "/run/ckpt/sub/r2.bin"), files_[2].content);
  std::string out2 = tmp_ / "out2";
  EXPECT_EQ(cmd_restore({store_, "--to=" + out2, "/run/ckpt/r1.bin"}), 0);
  EXPECT_EQ(test::read_all(out2 + "/r1.bin"), files_[1].content);
  EXPECT_FALSE(fs::exists(out2 + "/r0.bin"));
  std::string out3 = tmp_ / "out3";
  EXPECT_EQ(cmd_restore({store_, "--to", out3, "/run/ckpt/sub"}), 0)
      << "a directory selects below it";
  EXPECT_EQ(test::read_all(out3 + "/r2.bin"), files_[2].content);
  EXPECT_EQ(cmd_restore({store_, "--to", tmp_ / "out4", "/run/ckpt/nope"}), 1);
}

TEST_F(StoreTest, RestoreFromASingleContainerFile) {
  make_store(three_files());
  EXPECT_EQ(cmd_restore({store_ + "/c-1.ckc", "--to", out_}), 0);
  EXPECT_EQ(test::read_all(out_ + "/sub/r2.bin"), files_[2].content);
}

TEST_F(StoreTest, HostilePathsNeverLeaveTheTarget) {
  std::vector<TestFile> files = {{"/a/../../../escape1", {'x'}, {}, 0},
                                 {"relative/escape2", {'x'}, {}, 0},
                                 {"/a//b", {'x'}, {}, 0},
                                 {"/a/./c", {'x'}, {}, 0},
                                 {"/a/ok.bin", {'o', 'k'}, {}, 0}};
  make_store(files);
  fs::create_directories(out_);
  EXPECT_EQ(cmd_restore({store_, "--to", out_}), 1) << "refused paths make the exit status 1";
  EXPECT_FALSE(fs::exists(tmp_ / "escape1"));
  EXPECT_FALSE(fs::exists(tmp_.path() + "/../escape1"));
  EXPECT_FALSE(fs::exists("/escape1"));
  // The sound file is still restored.
  EXPECT_EQ(test::read_all(out_ + "/ok.bin"), (std::vector<uint8_t>{'o', 'k'}));
  size_t n = 0;
  for (auto& e : fs::recursive_directory_iterator(tmp_.path())) n += e.is_regular_file();
  EXPECT_EQ(n, 4u) << "only the container, the MANIFEST, its tail and ok.bin exist";
}

TEST_F(StoreTest, SymlinksInsideTheTargetAreNotFollowed) {
  make_store(three_files());
  fs::create_directories(out_);
  fs::create_directories(tmp_ / "victim");
  fs::create_directory_symlink(tmp_ / "victim", out_ + "/sub");  // parent is a link
  fs::create_symlink(tmp_ / "victim/target", out_ + "/r0.bin");  // leaf is a link
  EXPECT_EQ(cmd_restore({store_, "--to", out_}), 1);
  EXPECT_TRUE(fs::is_empty(tmp_ / "victim")) << "nothing written through a symlink";
  // The leaf symlink was replaced by the restored file (rename does not follow it).
  EXPECT_FALSE(fs::is_symlink(out_ + "/r0.bin"));
  EXPECT_EQ(test::read_all(out_ + "/r0.bin"), files_[0].content);
  EXPECT_EQ(test::read_all(out_ + "/r1.bin"), files_[1].content);
}

TEST_F(StoreTest, CorruptFileFailsAloneAndVerifyNamesTheOffset) {
  make_store(three_files());
  EXPECT_EQ(cmd_verify({store_}), 0);
  ContainerReader r;
  std::string err;
  ASSERT_TRUE(r.open(store_ + "/c-1.ckc", &err)) << err;
  // r1.bin is random (raw chunks) at stream bytes 30000..50000: chunk 9 is inside it.
  ChunkInfo victim = r.streams()[0].chunks[9];
  std::vector<uint8_t> bytes = test::read_all(store_ + "/c-1.ckc");
  bytes[victim.offset + 10] ^= 0xFF;
  test::write_all(store_ + "/c-1.ckc", bytes);

  testing::internal::CaptureStdout();
  EXPECT_EQ(cmd_verify({store_}), 1);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("c-1.ckc: offset " + std::to_string(victim.offset) + ": chunk 9 of stream"),
            std::string::npos)
      << out;

  testing::internal::CaptureStderr();
  EXPECT_EQ(cmd_restore({store_, "--to", out_}), 1);
  std::string errs = testing::internal::GetCapturedStderr();
  EXPECT_NE(errs.find("/run/ckpt/r1.bin"), std::string::npos) << errs;
  EXPECT_NE(errs.find("c-1.ckc"), std::string::npos) << errs;
  EXPECT_NE(errs.find("offset " + std::to_string(victim.offset)), std::string::npos) << errs;
  EXPECT_FALSE(fs::exists(out_ + "/r1.bin")) << "no half-restored file under the real name";
  EXPECT_EQ(test::read_all(out_ + "/r0.bin"), files_[0].content);
  EXPECT_EQ(test::read_all(out_ + "/sub/r2.bin"), files_[2].content);
}

TEST_F(StoreTest, LsAndVerifyErrors) {
  make_store(three_files());
  EXPECT_EQ(cmd_ls({store_}), 0);
  EXPECT_EQ(cmd_ls({store_, "--all"}), 0);
  testing::internal::CaptureStderr();
  EXPECT_EQ(cmd_ls({tmp_.path()}), 1);
  std::string e = testing::internal::GetCapturedStderr();
  EXPECT_NE(e.find("no MANIFEST in " + tmp_.path()), std::string::npos) << e;
  EXPECT_EQ(cmd_ls({tmp_ / "nope"}), 1);
  EXPECT_EQ(cmd_ls({}), 2);
  EXPECT_EQ(cmd_restore({store_}), 2) << "--to is required";
  EXPECT_EQ(cmd_verify({store_ + "/c-1.ckc"}), 0);
  // A live entry whose container is gone is a problem; a corrupt MANIFEST line too.
  std::string err;
  ASSERT_TRUE(manifest::append_commit(store_, "gone.ckc", test::kFakeId,
                                      {CatalogEntry{"/x", "", 0, 1, 0644, 0}}, &err));
  EXPECT_EQ(cmd_verify({store_}), 1);
}

}  // namespace
}  // namespace ckptfwd::cli
