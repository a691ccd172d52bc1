// The forwarder on a store with shared files written from two nodes (a base plus overlays,
// built by hand: tests/unit/core_layered_store.h): STAT gives the merged size, a read view
// and the starting bytes of a write open hold the merged bytes, and a new overlay gives a
// new read view rather than the stale one.

#include "core_layered_store.h"
#include "forwarder/restore/restore.h"
#include "forwarder/util/store_paths.h"
#include "forwarder_test_util.h"

namespace ckptfwd::fwd::test {
namespace {

std::string str(const std::vector<uint8_t>& v) { return std::string(v.begin(), v.end()); }

class LayeredForwarder : public ForwarderTest {
 protected:
  void SetUp() override {
    ForwarderTest::SetUp();
    std::string err;
    ASSERT_TRUE(ls_.build(store(), &err, data_)) << err;
  }
  ckptfwd::test::LayeredStore ls_;
};

TEST_F(LayeredForwarder, StatAndReadViewGiveTheMergedFile) {
  start();
  auto c = client();
  auto st = c->call({"STAT", data_ + "/f"});
  ASSERT_EQ(st[0], "OK");
  EXPECT_EQ(st[1], "30000") << "the effective size, not the base's 12000";
  EXPECT_EQ(st[2], "640");
  st = c->call({"STAT", data_ + "/g"});
  ASSERT_EQ(st[0], "OK") << "an overlay-only file exists";
  EXPECT_EQ(st[1], "5000");

  auto r = c->call({"OPEN", data_ + "/f", std::to_string(O_RDONLY), "0"});
  ASSERT_EQ(r[0], "OK");
  EXPECT_EQ(read_file(r[2]), str(ls_.want_f));
  EXPECT_NE(r[2], read_view_path(paths_.dir, store(), "c-base.ckc", 0))
      << "a layered view is not named after its base alone";
  EXPECT_EQ(read_through(*c, data_ + "/g"), str(ls_.want_g));
}

TEST_F(LayeredForwarder, ANewOverlayGivesANewView) {
  start();
  auto c = client();
  auto r1 = c->call({"OPEN", data_ + "/g", std::to_string(O_RDONLY), "0"});
  ASSERT_EQ(r1[0], "OK");
  ASSERT_EQ(read_file(r1[2]), str(ls_.want_g));
  // A third node commits its extents of /g while the forwarder runs.
  ckptfwd::test::OverlayFile g3{
      data_ + "/g", ckptfwd::test::random_bytes(6000, 7), {{500, 200}, {5500, 500}}};
  std::string err;
  ASSERT_TRUE(
      ckptfwd::test::build_overlay_container(store() + "/c-n2.ckc", {g3}, 4096, "zstd", &err))
      << err;
  ASSERT_TRUE(manifest::append_overlay(
      store(), "c-n2.ckc", {ckptfwd::test::LayeredStore::file(data_ + "/g", 0, 6000)}, &err))
      << err;
  std::vector<uint8_t> want = ls_.want_g;
  ckptfwd::test::apply_overlay_bytes(want, g3);
  auto st = c->call({"STAT", data_ + "/g"});
  EXPECT_EQ(st[1], "6000");
  auto r2 = c->call({"OPEN", data_ + "/g", std::to_string(O_RDONLY), "0"});
  ASSERT_EQ(r2[0], "OK");
  EXPECT_NE(r2[2], r1[2]);
  EXPECT_EQ(read_file(r2[2]), str(want));
}

TEST_F(LayeredForwarder, AWriteOpenStartsFromTheMergedBytes) {
  start();
  auto c = client();
  std::string path = data_ + "/f";
  // No O_TRUNC: the new version starts from the live content, and the app appends to it.
  write_version(*c, path, "TAIL", O_WRONLY | O_APPEND);
  EXPECT_EQ(read_through(*c, path), str(ls_.want_f) + "TAIL");
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  // Committed as a full version: it replaces base and overlays.
  Catalog cat;
  std::string err;
  ASSERT_TRUE(cat.load(store(), &err)) << err;
  const CatalogEntry* e = cat.find(path);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->overlays.empty());
  EXPECT_EQ(e->size, 30004u);
  EXPECT_EQ(read_through(*c, path), str(ls_.want_f) + "TAIL");
}

TEST_F(LayeredForwarder, RestoreEntryOfACorruptLayerFailsAndNamesIt) {
  Catalog cat;
  std::string err;
  ASSERT_TRUE(cat.load(store(), &err)) << err;
  std::string c = read_file(store() + "/c-n0.ckc");
  c[20] ^= 1;  // inside the first chunk
  write_file(store() + "/c-n0.ckc", c);
  bool restored = false;
  const CatalogEntry& e = *cat.find(data_ + "/f");
  std::string view = ensure_read_view(read_view_of(root_, store(), e), store(), e, &restored, &err);
  EXPECT_EQ(view, "");
  EXPECT_NE(err.find("overlay 2 of 2 (container c-n0.ckc)"), std::string::npos) << err;
  EXPECT_NE(err.find("offset 16"), std::string::npos) << err;
  // No view and no temporary left behind.
  for (auto& de : fs::directory_iterator(root_))
    EXPECT_NE(de.path().filename().string()[0], 'r') << de.path();
}

}  // namespace
}  // namespace ckptfwd::fwd::test
