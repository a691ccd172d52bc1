// The catalog snapshot (store/manifest/catalog_snapshot.h): it restores the catalog it was
// made of, a load from it replays only the records after it and gives what a whole replay
// gives, one that does not fit the MANIFEST (rewritten, corrupt, another CKPTFWD_KEEP) is
// ignored, and a new one is written only after the MANIFEST grew past the last.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "core_test_util.h"
#include "store/manifest/catalog_snapshot.h"
#include "store/manifest/manifest.h"

namespace ckptfwd {
namespace {

using test::kFakeId;
using test::TempDir;
const auto entry = test::catalog_entry;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void expect_same(const Catalog& a, const Catalog& b) {
  ASSERT_EQ(a.entries().size(), b.entries().size());
  for (const auto& [p, e] : b.entries()) {
    const CatalogEntry* x = a.find(p);
    ASSERT_NE(x, nullptr) << p;
    EXPECT_EQ(x->container, e.container) << p;
    EXPECT_EQ(x->size, e.size) << p;
    EXPECT_EQ(x->mode, e.mode) << p;
    EXPECT_EQ(x->overlays, e.overlays) << p;
    EXPECT_EQ(x->base_id, e.base_id) << p;
    EXPECT_EQ(x->file_index, e.file_index) << p;
    EXPECT_EQ(x->mtime_ns, e.mtime_ns) << p;
    EXPECT_EQ(x->base_size, e.base_size) << p;
  }
  EXPECT_EQ(a.containers(), b.containers());
  EXPECT_EQ(a.problems(), b.problems());
  EXPECT_EQ(a.uncertain(), b.uncertain());
  EXPECT_EQ(a.unreadable(), b.unreadable());
  EXPECT_EQ(a.chain_breaks(), b.chain_breaks());
  EXPECT_EQ(a.garbage(), b.garbage());
  EXPECT_EQ(a.chained_records(), b.chained_records());
  EXPECT_EQ(a.unchained_records(), b.unchained_records());
  for (const std::string& c : b.containers()) {
    EXPECT_EQ(a.identity_of(c), b.identity_of(c)) << c;
    for (uint32_t i = 0; i < 2; ++i) EXPECT_EQ(a.is_overlay(c, i), b.is_overlay(c, i)) << c;
  }
}

// Every kind of record: commits, an overlay, a create, a rename, a chmod, an unlink, a drop.
void history(const std::string& store, int steps) {
  std::string err;
  for (int i = 0; i < steps; ++i) {
    const std::string c = "c" + std::to_string(i) + ".ckc", s = std::to_string(i);
    ASSERT_TRUE(manifest::append_commit(store, c, kFakeId,
                                        {entry("/d/a", 0, 10 + i), entry("/d/s" + s, 1, 5)}, &err))
        << err;
    ASSERT_TRUE(manifest::append_overlay(store, "o" + c, kFakeId, {entry("/d/a", 0, 40)}, &err));
    ASSERT_TRUE(manifest::append_create(store, "n" + c, kFakeId, {entry("/d/n", 0, 3)}, &err));
    ASSERT_TRUE(manifest::append_rename(store, "/d/s" + s, "/d/r" + s, &err));
    ASSERT_TRUE(manifest::append_chmod(store, "/d/r" + s, 0640, &err));
    if (i > 1) {
      ASSERT_TRUE(manifest::append_unlink(store, "/d/r" + std::to_string(i - 2), &err));
    }
  }
  ASSERT_TRUE(manifest::append_drops(store, {"c0.ckc"}, &err)) << err;
  // A path with a tab, a newline and '%' in it; an overlay-only file.
  ASSERT_TRUE(
      manifest::append_commit(store, "odd.ckc", kFakeId, {entry("/d/t\tn\n%25", 0, 1)}, &err));
  ASSERT_TRUE(manifest::append_overlay(store, "only.ckc", kFakeId, {entry("/d/only", 0, 9)}, &err));
}

// The record of odd.ckc garbled (a corrupt record: reported, skipped, the path it names
// uncertain; no later record names that path).
void garble_a_line(const std::string& store) {
  std::string text = slurp(store + "/MANIFEST");
  size_t at = text.find("odd.ckc");
  ASSERT_NE(at, std::string::npos);
  const size_t end = text.find('\n', at);  // a digit of its line checksum changed
  text[end - 3] = text[end - 3] == '0' ? '1' : '0';
  std::ofstream(store + "/MANIFEST", std::ios::binary | std::ios::trunc) << text;
}

TEST(CatalogSnapshot, RestoresTheCatalogItWasMadeOf) {
  TempDir dir;
  history(dir.path(), 6);
  garble_a_line(dir.path());
  Catalog whole, back;
  whole.keep_versions(2);
  std::string err;
  ASSERT_TRUE(whole.load(dir.path(), &err)) << err;
  ASSERT_FALSE(whole.problems().empty());
  ASSERT_FALSE(whole.uncertain().empty());
  const std::string text = whole.snapshot_text();
  ASSERT_FALSE(text.empty());
  ASSERT_TRUE(back.restore_snapshot(text));
  expect_same(back, whole);
  EXPECT_EQ(back.snapshot_text(), text);
  whole.apply_unlink("/d/a");  // changed in memory: no longer a replay of the MANIFEST
  EXPECT_EQ(whole.snapshot_text(), "");
}

TEST(CatalogSnapshot, ALoadFromItReplaysOnlyTheRecordsAfterIt) {
  TempDir dir;
  history(dir.path(), 4);
  std::string err;
  Catalog first;
  first.keep_versions(2);
  ASSERT_TRUE(first.load(dir.path(), &err));
  uint64_t bytes = 0;
  ASSERT_TRUE(catalog_snapshot::write(dir.path(), first, &err, &bytes)) << err;
  EXPECT_GT(bytes, 0u);
  ASSERT_TRUE(
      manifest::append_commit(dir.path(), "late.ckc", kFakeId, {entry("/d/late", 0, 7)}, &err));
  ASSERT_TRUE(manifest::append_unlink(dir.path(), "/d/n", &err));
  Catalog fast, whole;
  fast.keep_versions(2);
  whole.keep_versions(2);
  ASSERT_TRUE(fast.load_from_snapshot(dir.path(), &err)) << err;
  ASSERT_TRUE(whole.load(dir.path(), &err));
  EXPECT_EQ(fast.snapshot_offset(), first.replayed_bytes()) << "the snapshot was not used";
  EXPECT_EQ(fast.replayed_bytes(), whole.replayed_bytes());
  expect_same(fast, whole);
  EXPECT_NE(fast.find("/d/late"), nullptr);
  EXPECT_EQ(fast.find("/d/n"), nullptr);
}

TEST(CatalogSnapshot, OneThatDoesNotFitIsIgnored) {
  TempDir dir;
  history(dir.path(), 3);
  std::string err;
  Catalog first;
  ASSERT_TRUE(first.load(dir.path(), &err));
  ASSERT_TRUE(catalog_snapshot::write(dir.path(), first, &err)) << err;
  const std::string snap = dir / "MANIFEST.snap", good = slurp(snap);
  auto ignored = [&](const char* why, int keep) {
    Catalog fast, whole;
    fast.keep_versions(keep);
    whole.keep_versions(keep);
    ASSERT_TRUE(fast.load_from_snapshot(dir.path(), &err)) << err;
    ASSERT_TRUE(whole.load(dir.path(), &err));
    EXPECT_EQ(fast.snapshot_offset(), 0u) << why << ": used";
    expect_same(fast, whole);
  };
  // A corrupt snapshot (one byte changed).
  std::string bad = good;
  bad[bad.size() / 2] ^= 0x1;
  std::ofstream(snap, std::ios::binary | std::ios::trunc) << bad;
  ignored("corrupt", 0);
  // Made with another CKPTFWD_KEEP (the kept versions differ).
  std::ofstream(snap, std::ios::binary | std::ios::trunc) << good;
  ignored("another keep", 2);
  // A MANIFEST rewritten: other records, longer than the snapshot's offset.
  ASSERT_EQ(unlink((dir / "MANIFEST").c_str()), 0);
  history(dir.path(), 5);
  ignored("rewritten", 0);
  // Cut off before the snapshot's offset.
  ASSERT_EQ(truncate((dir / "MANIFEST").c_str(), 100), 0);
  ignored("shortened", 0);
}

TEST(CatalogSnapshot, NoneOfACatalogThatReplayedATornLine) {
  TempDir dir;
  history(dir.path(), 2);
  std::string err;
  {
    std::ofstream m(dir / "MANIFEST", std::ios::binary | std::ios::app);
    m << "commit\tc9.ckc\t1";  // an append under way: its line not complete yet
  }
  Catalog cat;
  ASSERT_TRUE(cat.load(dir.path(), &err));
  ASSERT_FALSE(cat.problems().empty());
  EXPECT_EQ(cat.snapshot_text(), "")
      << "its problem (and uncertain paths) would outlive the line's completion";
}

TEST(CatalogSnapshot, ANewOneOnlyOnceTheManifestGrewPastTheLast) {
  TempDir dir;
  std::string err;
  Catalog cat;
  history(dir.path(), 2);
  ASSERT_TRUE(cat.load(dir.path(), &err));
  ASSERT_TRUE(catalog_snapshot::write_if_due(dir.path(), cat, &err));
  struct stat st;
  EXPECT_NE(stat((dir / "MANIFEST.snap").c_str(), &st), 0) << "written for a small MANIFEST";
  // Grown past kMinGrowth: due.
  std::vector<CatalogEntry> many;
  for (int i = 0; i < 2000; ++i) many.push_back(entry("/d/many/" + std::to_string(i), i, 100));
  for (int k = 0; k < 24; ++k)
    ASSERT_TRUE(
        manifest::append_commit(dir.path(), "m" + std::to_string(k) + ".ckc", kFakeId, many, &err));
  ASSERT_TRUE(cat.load(dir.path(), &err));
  ASSERT_GE(cat.replayed_bytes(), catalog_snapshot::kMinGrowth);
  ASSERT_TRUE(catalog_snapshot::write_if_due(dir.path(), cat, &err)) << err;
  ASSERT_EQ(stat((dir / "MANIFEST.snap").c_str(), &st), 0);
  EXPECT_EQ(cat.snapshot_offset(), cat.replayed_bytes());
  const auto first = st.st_mtim;
  // Not again before the MANIFEST grew by as much as that snapshot.
  ASSERT_TRUE(manifest::append_unlink(dir.path(), "/d/a", &err));
  ASSERT_TRUE(cat.load_appended(dir.path(), &err));
  ASSERT_TRUE(catalog_snapshot::write_if_due(dir.path(), cat, &err));
  ASSERT_EQ(stat((dir / "MANIFEST.snap").c_str(), &st), 0);
  EXPECT_EQ(st.st_mtim.tv_nsec, first.tv_nsec);
  EXPECT_EQ(st.st_mtim.tv_sec, first.tv_sec);
}

}  // namespace
}  // namespace ckptfwd
