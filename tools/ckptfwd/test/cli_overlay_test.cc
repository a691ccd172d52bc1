// The CLI on a store with shared files written from two nodes (a base plus overlays, see
// tests/unit/core_layered_store.h): restore gives the merged bytes, ls shows the overlays,
// verify checks overlay containers with the overlay hash and the layers' sizes.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli.h"
#include "core_layered_store.h"
#include "store/container/container.h"

namespace ckptfwd::cli {
namespace {

using test::TempDir;
namespace fs = std::filesystem;

class OverlayStore : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(ls_.build(store_, &err_)) << err_; }
  TempDir tmp_;
  std::string store_ = tmp_ / "store";
  std::string out_ = tmp_ / "out";
  std::string err_;
  test::LayeredStore ls_;
};

TEST_F(OverlayStore, RestoreGivesTheMergedBytes) {
  EXPECT_EQ(cmd_restore({store_, "--to", out_}), 0);
  std::vector<uint8_t> f = test::read_all(out_ + "/f");
  ASSERT_EQ(f.size(), 30000u);
  EXPECT_TRUE(f == ls_.want_f);
  EXPECT_FALSE(f == ls_.base_f) << "not just the base";
  EXPECT_TRUE(test::read_all(out_ + "/g") == ls_.want_g);
  struct stat st;
  ASSERT_EQ(::stat((out_ + "/g").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u) << "an overlay-only file takes the overlay's mode";
  size_t n = 0;
  for (auto& e : fs::recursive_directory_iterator(out_)) n += e.is_regular_file();
  EXPECT_EQ(n, 2u) << "no temporaries left behind";
}

TEST_F(OverlayStore, LsShowsTheOverlays) {
  testing::internal::CaptureStdout();
  EXPECT_EQ(cmd_ls({store_}), 0);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("OVL"), std::string::npos) << out;
  EXPECT_NE(out.find("30000"), std::string::npos) << "the merged size: " << out;
  EXPECT_NE(out.find("c-base.ckc"), std::string::npos) << out;
  EXPECT_NE(out.find(" +2  /d/f"), std::string::npos) << out;
  EXPECT_NE(out.find("  -" + std::string(29, ' ') + " +2  /d/g"), std::string::npos)
      << "no base, 2 overlays: " << out;
  testing::internal::CaptureStdout();
  EXPECT_EQ(cmd_ls({store_, "--all"}), 0);
  out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("layered files"), std::string::npos) << out;
  EXPECT_NE(out.find("overlay  c-n1.ckc #1  30000 bytes"), std::string::npos) << out;
  EXPECT_NE(out.find("base     -  (none"), std::string::npos) << out;
  EXPECT_NE(out.find("overlay /d/g"), std::string::npos) << out;
}

TEST_F(OverlayStore, VerifyChecksOverlayContainersAndLayerSizes) {
  testing::internal::CaptureStdout();
  EXPECT_EQ(cmd_verify({store_}), 0);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("OK: 3 containers, 5 files"), std::string::npos) << out;
  // A lone overlay container verifies too (either kind of hash).
  testing::internal::CaptureStdout();
  EXPECT_EQ(cmd_verify({store_ + "/c-n1.ckc"}), 0);
  testing::internal::GetCapturedStdout();
  // A layer whose recorded size disagrees with its container.
  ASSERT_TRUE(manifest::append_overlay(store_, "c-n1.ckc",
                                       {test::LayeredStore::file("/d/g", 0, 4999)}, &err_));
  testing::internal::CaptureStdout();
  EXPECT_EQ(cmd_verify({store_}), 1);
  out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("'/d/g' (overlay 3) records 4999 bytes but c-n1.ckc holds 5000"),
            std::string::npos)
      << out;
}

TEST_F(OverlayStore, ACorruptOverlayChunkFailsVerifyAndRestoreWithItsOffset) {
  ContainerReader r;
  ASSERT_TRUE(r.open(store_ + "/c-n1.ckc", &err_)) << err_;
  // c-n1's stream: g1's 2000 bytes, then ov1's 9000; chunk 5 is inside ov1's extents.
  ChunkInfo victim = r.streams()[0].chunks[5];
  std::vector<uint8_t> bytes = test::read_all(store_ + "/c-n1.ckc");
  bytes[victim.offset + 7] ^= 0x10;
  test::write_all(store_ + "/c-n1.ckc", bytes);
  std::string where = "c-n1.ckc: offset " + std::to_string(victim.offset);

  testing::internal::CaptureStdout();
  EXPECT_EQ(cmd_verify({store_}), 1);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find(where), std::string::npos) << out;

  testing::internal::CaptureStderr();
  EXPECT_EQ(cmd_restore({store_, "--to", out_}), 1);
  std::string errs = testing::internal::GetCapturedStderr();
  EXPECT_NE(errs.find("cannot restore /d/f: overlay 1 of 2 (container c-n1.ckc)"),
            std::string::npos)
      << errs;
  EXPECT_NE(errs.find(where), std::string::npos) << errs;
  EXPECT_FALSE(fs::exists(out_ + "/f")) << "no half-restored file under the real name";
  EXPECT_TRUE(test::read_all(out_ + "/g") == ls_.want_g) << "its chunks are intact";
}

TEST_F(OverlayStore, AnOverlayListedWithoutItsStoreSaysSo) {
  // A lone container does not know which files are overlays: restoring one as a whole file
  // fails with a message that says what to do.
  testing::internal::CaptureStderr();
  EXPECT_EQ(cmd_restore({store_ + "/c-n1.ckc", "--to", out_}), 1);
  std::string errs = testing::internal::GetCapturedStderr();
  EXPECT_NE(errs.find("it is an overlay"), std::string::npos) << errs;
}

}  // namespace
}  // namespace ckptfwd::cli
