// Where a captured file's store is (store_for), the forwarder's lookups of versions by path
// (State's index), and the catalog cache that replays only what was appended to a MANIFEST.
#include <sys/stat.h>

#include <filesystem>

#include "forwarder/state/catalog_cache.h"
#include "forwarder/state/state.h"
#include "forwarder/util/store_paths.h"
#include "forwarder_test_util.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd::test {
namespace fs = std::filesystem;

TEST(ForwarderStorePaths, StoreSitsAtTheLiteralDirectoryOfTheCaptureGlob) {
  Config cfg;
  cfg.set_capture("/scratch/run/ckpt/step_*/r*.bin:/data//x/./*.h5:/flat/ck*");
  ASSERT_EQ(cfg.capture_dirs.size(), 3u);
  EXPECT_EQ(cfg.capture_dirs[0], "/scratch/run/ckpt");
  EXPECT_EQ(cfg.capture_dirs[1], "/data/x");
  EXPECT_EQ(cfg.capture_dirs[2], "/flat");
  // Every step directory feeds one store.
  EXPECT_EQ(store_for(cfg, "/scratch/run/ckpt/step_1/r0.bin"), "/scratch/run/ckpt/.ckptfwd");
  EXPECT_EQ(store_for(cfg, "/scratch/run/ckpt/step_22/r7.bin"), "/scratch/run/ckpt/.ckptfwd");
  EXPECT_EQ(store_for(cfg, "/data/x/a/b/f.h5"), "/data/x/.ckptfwd");
  EXPECT_EQ(store_for(cfg, "/flat/ck1"), "/flat/.ckptfwd");
  // No glob directory holds it (a rename out of the capture): beside the file, as before.
  EXPECT_EQ(store_for(cfg, "/elsewhere/f"), "/elsewhere/.ckptfwd");
  EXPECT_EQ(store_for(cfg, "/scratch/run/ckptX/f"), "/scratch/run/ckptX/.ckptfwd");
  // CKPTFWD_STORE wins.
  cfg.store = "/s";
  EXPECT_EQ(store_for(cfg, "/scratch/run/ckpt/step_1/r0.bin"), "/s");
  EXPECT_EQ(known_stores(cfg), std::vector<std::string>{"/s"});
  cfg.store.clear();
  EXPECT_EQ(known_stores(cfg), (std::vector<std::string>{"/scratch/run/ckpt/.ckptfwd",
                                                         "/data/x/.ckptfwd", "/flat/.ckptfwd"}));
  // Without capture globs (tests, the CLI): beside the file.
  Config plain;
  EXPECT_TRUE(known_stores(plain).empty());
  EXPECT_EQ(store_for(plain, "/a/b/c"), "/a/b/.ckptfwd");
  EXPECT_EQ(store_for(plain, "/c"), "/.ckptfwd");
}

TEST(ForwarderStorePaths, TheLongestGlobDirectoryHoldingThePathWins) {
  Config cfg;
  cfg.set_capture("/a/*:/a/b/c/*.bin");
  EXPECT_EQ(store_for(cfg, "/a/b/c/x.bin"), "/a/b/c/.ckptfwd");
  EXPECT_EQ(store_for(cfg, "/a/b/x.bin"), "/a/.ckptfwd");
}

TEST_F(ForwarderTest, ADirectoryWithAStoreOfTheFormerDefaultKeepsIt) {
  Config cfg;
  cfg.set_capture(data_ + "/step_*/r*.bin");
  fs::create_directories(data_ + "/step_1/.ckptfwd");  // written by an earlier version
  fs::create_directories(data_ + "/step_2");
  EXPECT_EQ(store_for(cfg, data_ + "/step_1/r0.bin"), data_ + "/step_1/.ckptfwd");
  EXPECT_EQ(store_for(cfg, data_ + "/step_2/r0.bin"), data_ + "/.ckptfwd");
}

TEST_F(ForwarderTest, VersionsAreFoundByPathAfterRenamesForgetsAndOutsideInserts) {
  Stats stats;
  State s(cfg_, stats, root_);
  s.retire_grace = std::chrono::milliseconds(0);
  Version& a = s.add("/p/a", 0, 1, 1, 0644);
  uint64_t va = a.vid;
  Version& b = s.add("/p/b", 0, 1, 1, 0644);
  uint64_t vb = b.vid;
  EXPECT_EQ(s.newest("/p/a")->vid, va);
  bool preparing = true;
  EXPECT_EQ(s.open_for_write("/p/b", &preparing)->vid, vb);
  EXPECT_FALSE(preparing);
  s.set_path(*s.find(va), "/p/c");
  EXPECT_EQ(s.newest("/p/a"), nullptr);
  EXPECT_EQ(s.newest("/p/c")->vid, va);
  Version& a2 = s.add("/p/c", 0, 1, 1, 0644);  // a newer version of the renamed path
  EXPECT_EQ(s.newest("/p/c")->vid, a2.vid);
  EXPECT_EQ(s.pending_of("/p/c").size(), 2u);
  s.forget(a2.vid);
  EXPECT_EQ(s.newest("/p/c")->vid, va);
  // A recovery puts versions into the map itself: the next lookup still finds them.
  Version& r = s.versions[1000];
  r.vid = 1000;
  r.order = 1000;
  r.path = "/p/r";
  EXPECT_EQ(s.newest("/p/r")->vid, 1000u);
  s.forget(vb);
  EXPECT_EQ(s.newest("/p/b"), nullptr);
  EXPECT_EQ(s.newest("/p/r")->vid, 1000u);
  EXPECT_EQ(s.newest("/p/c")->vid, va);
}

namespace {
CatalogEntry entry(const std::string& path, uint32_t index, uint64_t size) {
  CatalogEntry e;
  e.path = path;
  e.file_index = index;
  e.size = size;
  e.mode = 0644;
  e.mtime_ns = 1;
  return e;
}
void expect_same(const Catalog& a, const Catalog& b) {
  ASSERT_EQ(a.entries().size(), b.entries().size());
  for (const auto& [path, e] : a.entries()) {
    const CatalogEntry* o = b.find(path);
    ASSERT_NE(o, nullptr) << path;
    EXPECT_EQ(o->container, e.container) << path;
    EXPECT_EQ(o->size, e.size) << path;
    EXPECT_EQ(o->mode, e.mode) << path;
  }
  EXPECT_EQ(a.containers(), b.containers());
}
}  // namespace

TEST_F(ForwarderTest, CatalogCacheReplaysAppendedRecordsLikeAWholeReload) {
  const std::string st = store();
  std::string err;
  ContainerIdentity id{100, 7};
  ASSERT_TRUE(manifest::ensure_store(st, &err)) << err;
  ASSERT_TRUE(manifest::append_commit(st, "c1.ckc", id, {entry("/d/a", 0, 5)}, &err)) << err;
  CatalogCache cache;
  ASSERT_NE(cache.find(st, "/d/a"), nullptr);
  // The forwarder applies its own records in memory right after appending them; a replay
  // of the appended bytes must not apply them twice (a rename re-applied after a newer
  // commit of its old name would move that commit away).
  ASSERT_TRUE(manifest::append_rename(st, "/d/a", "/d/b", &err)) << err;
  cache.get(st).apply_rename("/d/a", "/d/b");
  ASSERT_TRUE(manifest::append_commit(st, "c2.ckc", id, {entry("/d/a", 0, 9)}, &err)) << err;
  cache.get(st).apply_commit("c2.ckc", {entry("/d/a", 0, 9)}, id);
  ASSERT_TRUE(manifest::append_chmod(st, "/d/b", 0600, &err)) << err;  // by someone else
  Catalog whole;
  ASSERT_TRUE(whole.load(st, &err)) << err;
  expect_same(cache.get(st), whole);
  EXPECT_EQ(cache.find(st, "/d/b")->mode, 0600u);
  EXPECT_EQ(cache.find(st, "/d/a")->container, "c2.ckc");
  // Appends by others only: replayed onto the cached catalog.
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(manifest::append_commit(st, "c" + std::to_string(3 + i) + ".ckc", id,
                                        {entry("/d/f" + std::to_string(i % 5), 0, 10u + i)}, &err))
        << err;
  ASSERT_TRUE(whole.load(st, &err)) << err;
  expect_same(cache.get(st), whole);
  EXPECT_TRUE(cache.get(st).problems().empty());
}

// A catalog loaded ahead (preload, without the state lock) and installed is the one get()
// returns, replays what was appended after it like a first load would, and never takes
// the place of a catalog get() loaded meanwhile; a store without a MANIFEST gives none.
TEST_F(ForwarderTest, APreloadedCatalogIsUsedAndKeepsUp) {
  const std::string st = store();
  std::string err;
  ContainerIdentity id{100, 7};
  EXPECT_FALSE(CatalogCache().install(st, CatalogCache::preload(st, 0))) << "no MANIFEST yet";
  ASSERT_TRUE(manifest::ensure_store(st, &err)) << err;
  ASSERT_TRUE(manifest::append_commit(st, "c1.ckc", id, {entry("/d/a", 0, 5)}, &err)) << err;
  CatalogCache cache;
  CatalogCache::Preloaded p = CatalogCache::preload(st, 0);
  EXPECT_FALSE(cache.known(st));
  ASSERT_TRUE(manifest::append_commit(st, "c2.ckc", id, {entry("/d/b", 0, 7)}, &err)) << err;
  ASSERT_TRUE(cache.install(st, std::move(p)));
  EXPECT_TRUE(cache.known(st));
  EXPECT_EQ(cache.get(st).find("/d/a")->container, "c1.ckc");
  ASSERT_NE(cache.find(st, "/d/b"), nullptr) << "appended after the preload: replayed";
  Catalog whole;
  ASSERT_TRUE(whole.load(st, &err)) << err;
  expect_same(cache.get(st), whole);
  EXPECT_EQ(cache.copies(), 0u);
  // Loaded by get() first: a preload that comes late is dropped.
  CatalogCache first;
  ASSERT_NE(first.find(st, "/d/b"), nullptr);
  first.get(st).apply_chmod("/d/b", 0600);  // marks the catalog get() made
  EXPECT_FALSE(first.install(st, CatalogCache::preload(st, 0)));
  EXPECT_EQ(first.find(st, "/d/b")->mode, 0600u);
}

// The forwarder's own records are taken by replaying them (replay_appended), with another
// node's records appended before them: the catalog matches a whole reload and holds no
// in-memory change (which the next refresh would undo by copying the whole catalog).
TEST_F(ForwarderTest, OwnRecordsAreReplayedNotAppliedInMemory) {
  const std::string st = store();
  std::string err;
  ContainerIdentity id{100, 7};
  ASSERT_TRUE(manifest::ensure_store(st, &err)) << err;
  ASSERT_TRUE(manifest::append_commit(st, "c1.ckc", id, {entry("/d/a", 0, 5)}, &err)) << err;
  CatalogCache cache;
  ASSERT_NE(cache.find(st, "/d/a"), nullptr);
  cache.freeze(st, true);  // as under a manifest turn
  ASSERT_TRUE(manifest::append_commit(st, "o1.ckc", id, {entry("/d/x", 0, 3)}, &err)) << err;
  ASSERT_TRUE(manifest::append_rename(st, "/d/a", "/d/b", &err)) << err;
  EXPECT_TRUE(cache.replay_appended(st));
  ASSERT_TRUE(manifest::append_commit(st, "c2.ckc", id, {entry("/d/a", 0, 9)}, &err)) << err;
  EXPECT_TRUE(cache.replay_appended(st));
  cache.freeze(st, false);
  EXPECT_EQ(cache.get(st).local_changes(), 0u);
  Catalog whole;
  ASSERT_TRUE(whole.load(st, &err)) << err;
  expect_same(cache.get(st), whole);
  EXPECT_EQ(cache.find(st, "/d/b")->container, "c1.ckc");
  EXPECT_EQ(cache.find(st, "/d/a")->container, "c2.ckc");
  EXPECT_NE(cache.find(st, "/d/x"), nullptr);
  // Nothing appended: nothing to replay, the caller applies its change itself.
  EXPECT_FALSE(cache.replay_appended(st));
}

// End to end: commits through the forwarder leave its catalog without in-memory changes.
TEST_F(ForwarderTest, CommitsLeaveTheCatalogWithoutInMemoryChanges) {
  start();
  auto c = client();
  for (int i = 0; i < 3; ++i) {
    write_version(*c, data_ + "/f" + std::to_string(i), payload(5000 + i, i));
    ASSERT_EQ(c->call({"WAITALL"}), std::vector<std::string>{"OK"});
  }
  ASSERT_EQ(c->call({"RENAME", data_ + "/f0", data_ + "/g0"})[0], "OK");
  Core& core = fwd_->core();
  std::lock_guard lk(core.state.mu);
  EXPECT_EQ(core.state.catalogs.get(store()).local_changes(), 0u);
  EXPECT_EQ(core.state.catalogs.copies(), 0u) << "the catalog was copied after a commit";
  EXPECT_NE(core.state.catalogs.find(store(), data_ + "/g0"), nullptr);
  EXPECT_EQ(core.state.catalogs.find(store(), data_ + "/f0"), nullptr);
}

TEST_F(ForwarderTest, CatalogCacheReadsARewrittenManifestWhole) {
  const std::string st = store();
  std::string err;
  ContainerIdentity id{100, 7};
  ASSERT_TRUE(manifest::ensure_store(st, &err)) << err;
  ASSERT_TRUE(manifest::append_commit(st, "c1.ckc", id, {entry("/d/a", 0, 5)}, &err)) << err;
  CatalogCache cache;
  ASSERT_NE(cache.find(st, "/d/a"), nullptr);
  // Replaced by another MANIFEST (another file, longer): its records, not ours plus its tail.
  fs::remove(st + "/MANIFEST");
  fs::remove(st + "/MANIFEST.tail");
  ASSERT_TRUE(manifest::append_commit(st, "c9.ckc", id, {entry("/d/z", 0, 5)}, &err)) << err;
  ASSERT_TRUE(manifest::append_commit(st, "c8.ckc", id, {entry("/d/y", 0, 5)}, &err)) << err;
  EXPECT_EQ(cache.find(st, "/d/a"), nullptr);
  EXPECT_NE(cache.find(st, "/d/z"), nullptr);
  EXPECT_NE(cache.find(st, "/d/y"), nullptr);
  EXPECT_TRUE(cache.get(st).problems().empty());
}

}  // namespace ckptfwd::fwd::test
