// CKPTFWD_KEEP in the catalog: which containers are garbage for a keep count (the live
// version plus the newest keep-1 superseded versions of each path are needed), and the
// `drop` record that garbage collection writes before it deletes a container.
#include <gtest/gtest.h>

#include <algorithm>

#include "core_test_util.h"
#include "store/manifest/manifest.h"

namespace ckptfwd {
namespace {

using test::TempDir;
const auto entry = test::catalog_entry;

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// c1: a@1 b@1; c2: a@2; c3: a@3 (via tmp, renamed onto a); c4: an overlay on b; then b
// unlinked.
void history(Catalog& cat) {
  cat.apply_commit("c1.ckc", {entry("/d/a", 0, 10), entry("/d/b", 1, 20)});
  cat.apply_commit("c2.ckc", {entry("/d/a", 0, 11)});
  cat.apply_commit("c3.ckc", {entry("/d/a.tmp", 0, 12)});
  cat.apply_rename("/d/a.tmp", "/d/a");
  cat.apply_overlay("c4.ckc", {entry("/d/b", 0, 25)});
}

TEST(Keep, ZeroKeepsEverything) {
  Catalog cat;
  history(cat);
  cat.apply_unlink("/d/b");
  EXPECT_TRUE(cat.garbage().empty());
}

TEST(Keep, OneKeepsOnlyWhatLiveFilesUse) {
  Catalog cat;
  cat.keep_versions(1);
  history(cat);
  // a lives in c3; b lives in c1 (base) + c4 (overlay): c2 is garbage, c1 is not (b).
  EXPECT_EQ(sorted(cat.garbage()), std::vector<std::string>{"c2.ckc"});
  cat.apply_unlink("/d/b");
  EXPECT_EQ(sorted(cat.garbage()), (std::vector<std::string>{"c1.ckc", "c2.ckc", "c4.ckc"}));
}

TEST(Keep, TwoKeepsThePreviousVersionOfEachPath) {
  Catalog cat;
  cat.keep_versions(2);
  history(cat);
  // a: live c3, previous c2 (the rename onto a retired it); c1's a is two versions back,
  // but c1 holds b's live base.
  EXPECT_TRUE(cat.garbage().empty());
  cat.apply_commit("c5.ckc", {entry("/d/b", 0, 30)});
  // b's previous version is c1 base + c4 overlay: both needed; a's previous is c2.
  EXPECT_TRUE(cat.garbage().empty());
  cat.apply_commit("c6.ckc", {entry("/d/b", 0, 31)});
  EXPECT_EQ(sorted(cat.garbage()), (std::vector<std::string>{"c1.ckc", "c4.ckc"}));
  cat.apply_commit("c7.ckc", {entry("/d/a", 0, 13)});
  EXPECT_EQ(sorted(cat.garbage()), (std::vector<std::string>{"c1.ckc", "c2.ckc", "c4.ckc"}));
}

TEST(Keep, DropRecordsReplayAndForgetTheContainer) {
  TempDir dir;
  std::string store = dir.path(), err;
  ASSERT_TRUE(manifest::append_commit(store, "c1.ckc", test::kFakeId, {entry("/d/a", 0, 10)}, &err))
      << err;
  ASSERT_TRUE(manifest::append_commit(store, "c2.ckc", test::kFakeId, {entry("/d/a", 0, 11)}, &err))
      << err;
  Catalog cat;
  cat.keep_versions(1);
  ASSERT_TRUE(cat.load(store, &err)) << err;
  ASSERT_EQ(cat.garbage(), std::vector<std::string>{"c1.ckc"});
  ASSERT_TRUE(manifest::append_drops(store, {"c1.ckc"}, &err)) << err;

  Catalog again;  // the CLI (keep 0) replays it too: c1 is no longer a container to verify
  ASSERT_TRUE(again.load(store, &err)) << err;
  EXPECT_TRUE(again.problems().empty());
  EXPECT_EQ(again.containers(), std::vector<std::string>{"c2.ckc"});
  ASSERT_NE(again.find("/d/a"), nullptr);
  EXPECT_EQ(again.find("/d/a")->container, "c2.ckc");
}

TEST(Keep, ADropOfAContainerALiveFileNeedsIsReportedAndIgnored) {
  TempDir dir;
  std::string store = dir.path(), err;
  ASSERT_TRUE(manifest::append_commit(store, "c1.ckc", test::kFakeId, {entry("/d/a", 0, 10)}, &err))
      << err;
  ASSERT_TRUE(manifest::append_drops(store, {"c1.ckc"}, &err)) << err;  // hostile or hand-made
  Catalog cat;
  ASSERT_TRUE(cat.load(store, &err)) << err;
  ASSERT_EQ(cat.problems().size(), 1u);
  EXPECT_NE(cat.problems()[0].find("/d/a"), std::string::npos) << cat.problems()[0];
  EXPECT_EQ(cat.containers(), std::vector<std::string>{"c1.ckc"}) << "still verified";
  ASSERT_NE(cat.find("/d/a"), nullptr);
}

}  // namespace
}  // namespace ckptfwd
