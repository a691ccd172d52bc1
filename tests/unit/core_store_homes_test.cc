// STORE/HOMES (store/manifest/store_homes.h): a store moved with its run directory reads
// its files below where it is now, records appended after the move and before it alike,
// across two moves; a store of an earlier version gets its former place inferred; paths
// already below the capture directory and stores the user placed are never mapped.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "core_test_util.h"
#include "store/manifest/catalog_snapshot.h"
#include "store/manifest/manifest.h"
#include "store/manifest/store_homes.h"

namespace ckptfwd {
namespace {

using test::kFakeId;
using test::TempDir;
const auto entry = test::catalog_entry;
namespace fs = std::filesystem;

std::vector<std::string> live_paths(const Catalog& c) {
  std::vector<std::string> out;
  for (const auto& [p, e] : c.entries()) out.push_back(p);
  return out;
}

// Moves directory from to to (creating to's parent), as mv does.
void move_dir(const std::string& from, const std::string& to) {
  fs::create_directories(fs::path(to).parent_path());
  fs::rename(from, to);
}

TEST(StoreHomes, CaptureDirOfDefaultPlaceOnly) {
  EXPECT_EQ(store_homes::capture_dir("/a/run/ckpt/.ckptfwd"), "/a/run/ckpt");
  EXPECT_EQ(store_homes::capture_dir("/a/run/ckpt/.ckptfwd/"), "/a/run/ckpt");
  EXPECT_EQ(store_homes::capture_dir("/a//run/./ckpt/.ckptfwd"), "/a/run/ckpt");
  EXPECT_EQ(store_homes::capture_dir("/.ckptfwd"), "/");
  EXPECT_EQ(store_homes::capture_dir("/scratch/store"), "");
  EXPECT_EQ(store_homes::capture_dir(""), "");
  std::string cwd = fs::current_path().string();
  EXPECT_EQ(store_homes::capture_dir("ckpt/.ckptfwd"), cwd + "/ckpt");
}

TEST(StoreHomes, ApplyMapsBelowFormerPlacesNotBelowTheCurrent) {
  std::vector<store_homes::Move> m = {{"/a/run/ckpt/old", "/x"}, {"/a/run/ckpt", "/b/ckpt"}};
  EXPECT_EQ(store_homes::apply(m, "/b/ckpt", "/a/run/ckpt/s1/r0"), "/b/ckpt/s1/r0");
  EXPECT_EQ(store_homes::apply(m, "/b/ckpt", "/a/run/ckpt/old/r0"), "/x/r0");  // longest from
  EXPECT_EQ(store_homes::apply(m, "/b/ckpt", "/a/run/ckptX/r0"), "/a/run/ckptX/r0");
  EXPECT_EQ(store_homes::apply(m, "/b/ckpt", "/a/run/ckpt"), "/a/run/ckpt");  // the dir itself
  // Moved into a directory below its old place: paths already below it stay.
  std::vector<store_homes::Move> in = {{"/a/ckpt", "/a/ckpt/sub"}};
  EXPECT_EQ(store_homes::apply(in, "/a/ckpt/sub", "/a/ckpt/sub/r0"), "/a/ckpt/sub/r0");
  EXPECT_EQ(store_homes::apply(in, "/a/ckpt/sub", "/a/ckpt/r0"), "/a/ckpt/sub/r0");
}

TEST(StoreHomes, InferFormerFromTrailingNames) {
  std::vector<std::string> paths = {"/a/run/ckpt/step_1/r0", "/a/run/ckpt/step_1/r1"};
  // Only one step: the common directory is step_1, its ancestor named like cap is meant.
  EXPECT_EQ(store_homes::infer_former("/b/moved/run/ckpt", paths), "/a/run/ckpt");
  EXPECT_EQ(store_homes::infer_former("/b/run2/ckpt", paths), "/a/run/ckpt");
  // The checkpoint directory renamed: nothing to tell from.
  EXPECT_EQ(store_homes::infer_former("/a/run/ckpt_b", paths), "");
  // A path below cap already: no move.
  EXPECT_EQ(store_homes::infer_former("/a/run/ckpt", paths), "");
  EXPECT_EQ(store_homes::infer_former("/b/ckpt", {}), "");
}

TEST(StoreHomes, ReadMovesAndAddLines) {
  TempDir t;
  std::string store = t / "run/ckpt/.ckptfwd", err;
  ASSERT_TRUE(manifest::ensure_store(store, &err)) << err;
  bool present = true, placed = true;
  EXPECT_TRUE(store_homes::read_moves(store, &present, &placed).empty());
  EXPECT_FALSE(present);
  ASSERT_TRUE(store_homes::add_lines(store, {{"/old/ckpt", ""}, {t / "run/ckpt", ""}}, &err));
  ASSERT_TRUE(store_homes::add_lines(store, {{"/old/ckpt", ""}, {"/far\tx", "/near"}}, &err));
  std::ifstream f(store + "/HOMES");
  std::string text((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(text, "/old/ckpt\n" + (t / "run/ckpt") + "\n/far%09x\t/near\n");  // no repeats
  auto m = store_homes::read_moves(store, &present, &placed);
  EXPECT_TRUE(present);
  EXPECT_FALSE(placed);
  ASSERT_EQ(m.size(), 2u);  // the current place maps to itself: dropped
  EXPECT_EQ(m[0].from, "/old/ckpt");
  EXPECT_EQ(m[0].to, t / "run/ckpt");
  EXPECT_EQ(m[1].from, "/far\tx");
  EXPECT_EQ(m[1].to, "/near");
  struct stat st {};
  ASSERT_EQ(stat((store + "/HOMES").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(StoreHomes, MovedTwiceWithRecordsFromEachPlace) {
  TempDir t;
  std::string a = t / "a/run/ckpt", err;
  std::string store = a + "/.ckptfwd";
  ASSERT_TRUE(manifest::ensure_store(store, &err)) << err;
  store_homes::note_new_store(store);
  ASSERT_TRUE(manifest::append_commit(
      store, "c-1.ckc", kFakeId, {entry(a + "/s1/r0", 0, 10), entry(a + "/s1/r1", 1, 10)}, &err));
  // cp -a to b: read below b; a forwarder there records b and appends under b.
  std::string b = t / "b/run/ckpt";
  fs::create_directories(t / "b/run");
  fs::copy(t / "a/run", t / "b/run", fs::copy_options::recursive);
  fs::remove_all(t / "a");
  store = b + "/.ckptfwd";
  Catalog c;
  ASSERT_TRUE(c.load(store, &err)) << err;
  EXPECT_EQ(live_paths(c), (std::vector<std::string>{b + "/s1/r0", b + "/s1/r1"}));
  EXPECT_TRUE(c.inferred_former().empty());  // HOMES told it
  ASSERT_TRUE(store_homes::add_lines(store, {{b, ""}}, &err));
  ASSERT_TRUE(
      manifest::append_commit(store, "c-2.ckc", kFakeId, {entry(b + "/s2/r0", 0, 10)}, &err));
  ASSERT_TRUE(manifest::append_unlink(store, b + "/s1/r1", &err));  // an old file, new name
  ASSERT_TRUE(manifest::append_rename(store, b + "/s1/r0", b + "/s1/r0.keep", &err));
  // Moved again: records under a and under b all read below c.
  std::string cdir = t / "c/run/ckpt";
  move_dir(t / "b/run", t / "c/run");
  store = cdir + "/.ckptfwd";
  Catalog c2;
  ASSERT_TRUE(c2.load(store, &err)) << err;
  EXPECT_EQ(live_paths(c2), (std::vector<std::string>{cdir + "/s1/r0.keep", cdir + "/s2/r0"}));
  EXPECT_TRUE(c2.outside_capture_dir().empty());
  EXPECT_TRUE(c2.problems().empty());
  // No snapshot of mapped paths is written (the MANIFEST's own are not these).
  EXPECT_EQ(c2.snapshot_text(), "");
}

TEST(StoreHomes, StoreOfAnEarlierVersionGetsItsFormerPlaceInferred) {
  TempDir t;
  std::string a = t / "a/run/ckpt", err;
  std::string store = a + "/.ckptfwd";
  ASSERT_TRUE(manifest::ensure_store(store, &err)) << err;  // no note_new_store: no HOMES
  ASSERT_TRUE(
      manifest::append_commit(store, "c-1.ckc", kFakeId, {entry(a + "/step_1/r0", 0, 4)}, &err));
  move_dir(t / "a/run", t / "x/run2");
  Catalog c;
  ASSERT_TRUE(c.load(t / "x/run2/ckpt/.ckptfwd", &err)) << err;
  EXPECT_EQ(c.inferred_former(), a);
  EXPECT_EQ(live_paths(c), (std::vector<std::string>{t / "x/run2/ckpt/step_1/r0"}));
  // The same store read with inference off (a store the user placed): paths as written,
  // and none called outside (it has no capture directory of its own).
  Catalog u;
  u.infer_moves(false);
  ASSERT_TRUE(u.load(t / "x/run2/ckpt/.ckptfwd", &err)) << err;
  EXPECT_EQ(live_paths(u), (std::vector<std::string>{a + "/step_1/r0"}));
  EXPECT_TRUE(u.outside_capture_dir().empty());
  // Renamed checkpoint directory: nothing inferred, the files are said to be outside.
  move_dir(t / "x/run2/ckpt", t / "x/run2/ckpt_b");
  Catalog r;
  ASSERT_TRUE(r.load(t / "x/run2/ckpt_b/.ckptfwd", &err)) << err;
  EXPECT_EQ(r.inferred_former(), "");
  EXPECT_EQ(r.outside_capture_dir(), (std::vector<std::string>{a + "/step_1/r0"}));
  // ckptfwd relocate's line fixes it.
  ASSERT_TRUE(store_homes::add_lines(t / "x/run2/ckpt_b/.ckptfwd", {{a, ""}}, &err));
  Catalog f;
  ASSERT_TRUE(f.load(t / "x/run2/ckpt_b/.ckptfwd", &err)) << err;
  EXPECT_EQ(live_paths(f), (std::vector<std::string>{t / "x/run2/ckpt_b/step_1/r0"}));
}

TEST(StoreHomes, AnotherPathToTheSameStoreIsNoMove) {
  // A second mount of a distributed file system, or a symbolic link: the store read
  // through another path lists its files as recorded, with no warning.
  TempDir t;
  std::string a = t / "a/ckpt", err;
  std::string store = a + "/.ckptfwd";
  ASSERT_TRUE(manifest::ensure_store(store, &err)) << err;
  store_homes::note_new_store(store);
  ASSERT_TRUE(manifest::append_commit(store, "c-1.ckc", kFakeId, {entry(a + "/r0", 0, 4)}, &err));
  fs::create_directories(t / "view");
  fs::create_directory_symlink(t / "a", t / "view/a");
  for (bool homes : {true, false}) {
    if (!homes) fs::remove(store + "/HOMES");  // an earlier version's: inferred, then an alias
    Catalog c;
    ASSERT_TRUE(c.load(t / "view/a/ckpt/.ckptfwd", &err)) << err;
    EXPECT_EQ(live_paths(c), (std::vector<std::string>{a + "/r0"})) << homes;
    EXPECT_TRUE(c.moves().empty()) << homes;
    EXPECT_TRUE(c.outside_capture_dir().empty()) << homes;
  }
}

TEST(StoreHomes, UserPlacedStoreIsNeverMapped) {
  TempDir t;
  std::string store = t / "s/.ckptfwd", err;
  ASSERT_TRUE(manifest::ensure_store(store, &err)) << err;
  store_homes::note_new_store(store, /*user_placed=*/true);
  ASSERT_TRUE(
      manifest::append_commit(store, "c-1.ckc", kFakeId, {entry("/elsewhere/s/r0", 0, 4)}, &err));
  Catalog c;
  ASSERT_TRUE(c.load(store, &err)) << err;
  EXPECT_EQ(live_paths(c), (std::vector<std::string>{"/elsewhere/s/r0"}));
  EXPECT_TRUE(c.moves().empty());
  EXPECT_TRUE(c.outside_capture_dir().empty());
}

TEST(StoreHomes, SnapshotOfTheOldPlaceIsNotUsedAfterAMove) {
  TempDir t;
  std::string a = t / "a/ckpt", err;
  std::string store = a + "/.ckptfwd";
  ASSERT_TRUE(manifest::ensure_store(store, &err)) << err;
  store_homes::note_new_store(store);
  ASSERT_TRUE(manifest::append_commit(store, "c-1.ckc", kFakeId, {entry(a + "/r0", 0, 4)}, &err));
  Catalog c;
  ASSERT_TRUE(c.load(store, &err)) << err;
  ASSERT_TRUE(catalog_snapshot::write(store, c, &err)) << err;
  ASSERT_TRUE(fs::exists(store + "/MANIFEST.snap"));
  move_dir(t / "a", t / "b");
  Catalog s;
  ASSERT_TRUE(s.load_from_snapshot(t / "b/ckpt/.ckptfwd", &err)) << err;
  EXPECT_EQ(live_paths(s), (std::vector<std::string>{t / "b/ckpt/r0"}));
}

}  // namespace
}  // namespace ckptfwd
