// Overlays (a shared file written from several nodes, manifest.h "Overlays"): the overlay
// record and its replay, ContainerReader::overlay_file and the overlay hash, and
// materialize_entry layering a base and overlays into one file.
#include <gtest/gtest.h>
#include <xxhash.h>

#include "core_layered_store.h"
#include "core_test_util.h"
#include "store/container/container.h"
#include "store/manifest/manifest.h"
#include "store/manifest/materialize.h"

namespace ckptfwd {
namespace {

using test::OverlayFile;
using test::TempDir;

CatalogEntry file(const std::string& path, uint32_t index, uint64_t size, uint32_t mode,
                  int64_t mtime_ns) {
  CatalogEntry e;
  e.path = path;
  e.file_index = index;
  e.size = size;
  e.mode = mode;
  e.mtime_ns = mtime_ns;
  return e;
}

std::string manifest_text(const std::string& store) {
  std::vector<uint8_t> b = test::read_all(store + "/MANIFEST");
  return std::string(b.begin(), b.end());
}

class OverlayManifest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(manifest::ensure_store(store_, &err_)) << err_; }
  Catalog load() {
    Catalog c;
    EXPECT_TRUE(c.load(store_, &err_)) << err_;
    return c;
  }
  TempDir dir_;
  std::string store_ = dir_ / "store";
  std::string err_;
};

TEST_F(OverlayManifest, CommitThenTwoOverlaysReplayAsAStack) {
  ASSERT_TRUE(manifest::append_commit(store_, "c-1.ckc", test::kFakeId,
                                      {file("/d/f", 0, 100, 0640, 10)}, &err_));
  ASSERT_TRUE(manifest::append_overlay(store_, "c-n1-2.ckc", test::kFakeId,
                                       {file("/d/f", 3, 150, 0600, 30)}, &err_));
  ASSERT_TRUE(manifest::append_overlay(
      store_, "c-n0-3.ckc", test::kFakeId,
      {file("/d/f", 0, 120, 0600, 20), file("/d/g", 1, 7, 0600, 5)}, &err_));
  EXPECT_NE(manifest_text(store_).find(
                "overlay\tc-n1-2.ckc\t1\t/d/f\t3\t150\t600\t30\t4096\t5eed5eed5eed5eed\t@"),
            std::string::npos)
      << manifest_text(store_);
  Catalog c = load();
  EXPECT_TRUE(c.problems().empty());
  const CatalogEntry* e = c.find("/d/f");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->container, "c-1.ckc");
  EXPECT_EQ(e->file_index, 0u);
  EXPECT_EQ(e->base_size, 100u);
  EXPECT_EQ(e->size, 150u) << "effective size: the largest layer";
  EXPECT_EQ(e->mode, 0640u) << "the base's mode stays";
  EXPECT_EQ(e->mtime_ns, 30) << "the latest mtime of all layers";
  ASSERT_EQ(e->overlays.size(), 2u);
  EXPECT_EQ(e->overlays[0], (Layer{"c-n1-2.ckc", 3, 150, test::kFakeId}));
  EXPECT_EQ(e->overlays[1], (Layer{"c-n0-3.ckc", 0, 120, test::kFakeId}));
  EXPECT_EQ(c.containers(), (std::vector<std::string>{"c-1.ckc", "c-n1-2.ckc", "c-n0-3.ckc"}));
  EXPECT_TRUE(c.is_overlay("c-n1-2.ckc", 3));
  EXPECT_TRUE(c.is_overlay("c-n0-3.ckc", 1));
  EXPECT_FALSE(c.is_overlay("c-1.ckc", 0));
  EXPECT_FALSE(c.is_overlay("c-n1-2.ckc", 0));
}

TEST_F(OverlayManifest, OverlayWithoutBaseCreatesAnEntryWithAnEmptyBase) {
  ASSERT_TRUE(manifest::append_overlay(store_, "c-n1-1.ckc", test::kFakeId,
                                       {file("/d/f", 2, 50, 0604, 7)}, &err_));
  Catalog c = load();
  const CatalogEntry* e = c.find("/d/f");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->container, "");
  EXPECT_EQ(e->base_size, 0u);
  EXPECT_EQ(e->size, 50u);
  EXPECT_EQ(e->mode, 0604u) << "mode and mtime from the overlay";
  EXPECT_EQ(e->mtime_ns, 7);
  ASSERT_EQ(e->overlays.size(), 1u);
  EXPECT_EQ(e->overlays[0], (Layer{"c-n1-1.ckc", 2, 50, test::kFakeId}));
  // A second overlay can be smaller: the size never goes down.
  c.apply_overlay("c-n0-2.ckc", {file("/d/f", 0, 20, 0600, 9)});
  EXPECT_EQ(c.find("/d/f")->size, 50u);
  EXPECT_EQ(c.find("/d/f")->overlays.size(), 2u);
}

TEST_F(OverlayManifest, ACommitAfterOverlaysReplacesTheWholeStack) {
  ASSERT_TRUE(manifest::append_commit(store_, "c-1.ckc", test::kFakeId,
                                      {file("/d/f", 0, 100, 0640, 1)}, &err_));
  ASSERT_TRUE(manifest::append_overlay(store_, "c-2.ckc", test::kFakeId,
                                       {file("/d/f", 0, 300, 0640, 2)}, &err_));
  ASSERT_TRUE(manifest::append_commit(store_, "c-3.ckc", test::kFakeId,
                                      {file("/d/f", 4, 80, 0640, 3)}, &err_));
  Catalog c = load();
  const CatalogEntry* e = c.find("/d/f");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->container, "c-3.ckc");
  EXPECT_EQ(e->file_index, 4u);
  EXPECT_TRUE(e->overlays.empty());
  EXPECT_EQ(e->size, 80u) << "a full commit may shrink the file";
  EXPECT_EQ(e->base_size, 80u);
  EXPECT_TRUE(c.is_overlay("c-2.ckc", 0)) << "history still knows what kind the file is";
}

TEST_F(OverlayManifest, RenameCarriesOverlaysChmodKeepsThemUnlinkDropsThem) {
  ASSERT_TRUE(manifest::append_commit(store_, "c-1.ckc", test::kFakeId,
                                      {file("/d/f", 0, 10, 0640, 1)}, &err_));
  ASSERT_TRUE(manifest::append_overlay(
      store_, "c-2.ckc", test::kFakeId,
      {file("/d/f", 0, 20, 0640, 2), file("/d/sub/g", 1, 5, 0600, 2)}, &err_));
  ASSERT_TRUE(manifest::append_rename(store_, "/d/f", "/d/f2", &err_));
  ASSERT_TRUE(manifest::append_rename(store_, "/d/sub", "/d/sub2", &err_));
  ASSERT_TRUE(manifest::append_chmod(store_, "/d/f2", 0444, &err_));
  Catalog c = load();
  EXPECT_EQ(c.find("/d/f"), nullptr);
  const CatalogEntry* e = c.find("/d/f2");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->path, "/d/f2");
  EXPECT_EQ(e->container, "c-1.ckc");
  EXPECT_EQ(e->size, 20u);
  EXPECT_EQ(e->mode, 0444u);
  ASSERT_EQ(e->overlays.size(), 1u);
  EXPECT_EQ(e->overlays[0], (Layer{"c-2.ckc", 0, 20, test::kFakeId}));
  const CatalogEntry* g = c.find("/d/sub2/g");
  ASSERT_NE(g, nullptr) << "a directory rename moves overlay-only entries too";
  EXPECT_EQ(g->overlays.size(), 1u);
  ASSERT_TRUE(manifest::append_unlink(store_, "/d/f2", &err_));
  c = load();
  EXPECT_EQ(c.find("/d/f2"), nullptr);
  // A new overlay after the unlink starts a fresh stack with no base.
  c.apply_overlay("c-3.ckc", {file("/d/f2", 0, 3, 0600, 4)});
  EXPECT_EQ(c.find("/d/f2")->container, "");
  EXPECT_EQ(c.find("/d/f2")->overlays.size(), 1u);
}

TEST_F(OverlayManifest, TornCorruptAndMalformedOverlayLinesAreSkipped) {
  ASSERT_TRUE(manifest::append_commit(store_, "c-1.ckc", test::kFakeId,
                                      {file("/d/f", 0, 10, 0640, 1)}, &err_));
  ASSERT_TRUE(manifest::append_overlay(store_, "c-2.ckc", test::kFakeId,
                                       {file("/d/f", 0, 20, 0640, 2)}, &err_));
  std::string good = manifest_text(store_);
  // A malformed overlay (count says 2, one file given) with a valid checksum.
  std::string body = "overlay\tc-3.ckc\t2\t/d/f\t0\t30\t640\t3";
  char sum[17];
  snprintf(sum, sizeof(sum), "%016llx",
           static_cast<unsigned long long>(XXH64(body.data(), body.size(), 0)));
  std::string malformed = body + "\t#" + sum + "\n";
  // A corrupt one: a valid line with one byte changed.
  std::string corrupt = "overlay\tc-4.ckc\t1\t/d/f\t0\t40\t640\t4\t#0123456789abcdef\n";
  // A torn one: the start of a record, no newline (an append interrupted).
  std::string torn = "overlay\tc-5.ckc\t1\t/d/f\t0\t5";
  std::string all = good + malformed + corrupt + torn;
  test::write_all(store_ + "/MANIFEST", std::vector<uint8_t>(all.begin(), all.end()));
  Catalog c = load();
  // The malformed line is of the older format (no chain) after chained records: reported
  // for that too.
  ASSERT_EQ(c.problems().size(), 4u);
  EXPECT_NE(c.problems()[0].find("record without chain"), std::string::npos) << c.problems()[0];
  EXPECT_NE(c.problems()[1].find("malformed overlay record"), std::string::npos) << c.problems()[1];
  EXPECT_NE(c.problems()[2].find("checksum mismatch"), std::string::npos) << c.problems()[2];
  EXPECT_NE(c.problems()[3].find("incomplete last record"), std::string::npos) << c.problems()[3];
  const CatalogEntry* e = c.find("/d/f");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->size, 20u);
  ASSERT_EQ(e->overlays.size(), 1u) << "only the sound overlay counts";
  // The next append still lands on a line of its own and replays.
  ASSERT_TRUE(manifest::append_overlay(store_, "c-6.ckc", test::kFakeId,
                                       {file("/d/f", 0, 60, 0640, 6)}, &err_));
  c = load();
  EXPECT_EQ(c.find("/d/f")->overlays.size(), 2u);
  EXPECT_EQ(c.find("/d/f")->size, 60u);
}

// ---------------------------------------------------------------------------------------
// ContainerReader::overlay_file and the overlay hash

// Node n1's view of /d/f: 30000 bytes, of which it wrote [5000, 12000) and [20000, 26000).
OverlayFile n1_overlay() {
  return {"/d/f", test::random_bytes(30000, 11), {{5000, 7000}, {20000, 6000}}};
}

TEST(OverlayFile, WritesOnlyItsRangesAndGrowsTheFile) {
  TempDir dir;
  std::string err;
  OverlayFile o = n1_overlay();
  ASSERT_TRUE(test::build_overlay_container(dir / "c.ckc", {o}, 1000, "zstd", &err)) << err;
  ContainerReader r;
  ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
  // Below it: 8000 bytes of a base.
  std::vector<uint8_t> want = test::smooth_bytes(8000, 4);
  test::write_all(dir / "out", want);
  int fd = ::open((dir / "out").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(r.overlay_file(0, fd, &err)) << err;
  ::close(fd);
  test::apply_overlay_bytes(want, o);
  std::vector<uint8_t> got = test::read_all(dir / "out");
  ASSERT_EQ(got.size(), 30000u);
  EXPECT_TRUE(got == want) << "holes keep the base bytes, the tail past the base is zero";
  EXPECT_EQ(got[100], test::smooth_bytes(8000, 4)[100]);
  EXPECT_EQ(got[15000], 0);
}

TEST(OverlayFile, NeverShrinksALongerFile) {
  TempDir dir;
  std::string err;
  OverlayFile o = n1_overlay();
  ASSERT_TRUE(test::build_overlay_container(dir / "c.ckc", {o}, 4096, "raw", &err)) << err;
  ContainerReader r;
  ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
  std::vector<uint8_t> want = test::smooth_bytes(50000, 2);
  test::write_all(dir / "out", want);
  int fd = ::open((dir / "out").c_str(), O_RDWR);
  ASSERT_TRUE(r.overlay_file(0, fd, &err)) << err;
  ::close(fd);
  test::apply_overlay_bytes(want, o);
  EXPECT_EQ(want.size(), 50000u);
  EXPECT_TRUE(test::read_all(dir / "out") == want);
}

TEST(OverlayFile, TheHashIsOfTheRangesAndEachKindIsCheckedAsItsOwn) {
  TempDir dir;
  std::string err;
  OverlayFile o = n1_overlay();
  ASSERT_TRUE(test::build_overlay_container(dir / "c.ckc", {o}, 1000, "zstd", &err)) << err;
  ContainerReader r;
  ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
  EXPECT_EQ(r.files()[0].hash, test::overlay_hash(o));
  // Restored as a whole file it fails, and says why.
  int fd = ::open((dir / "whole").c_str(), O_RDWR | O_CREAT, 0600);
  EXPECT_FALSE(r.restore_file(0, fd, &err));
  ::close(fd);
  EXPECT_NE(err.find("it is an overlay"), std::string::npos) << err;
  std::vector<uint8_t> mem;
  EXPECT_FALSE(r.read_file(0, mem, &err));
  // verify: told the kinds, it checks each as its own; not told, either passes.
  std::vector<std::string> problems;
  std::vector<bool> overlay = {true};
  EXPECT_TRUE(r.verify(problems, &overlay)) << (problems.empty() ? "" : problems[0]);
  EXPECT_TRUE(r.verify(problems));
  std::vector<bool> whole = {false};
  EXPECT_FALSE(r.verify(problems, &whole));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("/d/f"), std::string::npos) << problems[0];

  // A whole file with holes is not a valid overlay (its hash counts the holes as zeros).
  std::vector<test::TestFile> files = {
      {"/d/w", test::random_bytes(9000, 5), {{0, 3000}, {6000, 3000}}, 0}};
  for (size_t i = 3000; i < 6000; ++i) files[0].content[i] = 0;
  ASSERT_TRUE(test::build_container(dir / "w.ckc", files, 1, 1000, "zstd", &err)) << err;
  ContainerReader w;
  ASSERT_TRUE(w.open(dir / "w.ckc", &err)) << err;
  fd = ::open((dir / "w").c_str(), O_RDWR | O_CREAT, 0600);
  EXPECT_FALSE(w.overlay_file(0, fd, &err));
  ::close(fd);
  EXPECT_NE(err.find("overlay content (its ranges) does not match its checksum"), std::string::npos)
      << err;
  problems.clear();
  EXPECT_FALSE(w.verify(problems, &overlay));
  EXPECT_TRUE(w.verify(problems, &whole));
}

TEST(OverlayFile, ACorruptOverlayChunkIsFoundAtItsOffset) {
  TempDir dir;
  std::string err;
  OverlayFile o = n1_overlay();
  ASSERT_TRUE(test::build_overlay_container(dir / "c.ckc", {o}, 1000, "raw", &err)) << err;
  ContainerReader r;
  ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
  ChunkInfo victim = r.streams()[0].chunks[8];  // stream bytes 8000..9000: second extent
  std::vector<uint8_t> bytes = test::read_all(dir / "c.ckc");
  bytes[victim.offset + 3] ^= 0x40;
  test::write_all(dir / "c.ckc", bytes);
  ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
  int fd = ::open((dir / "out").c_str(), O_RDWR | O_CREAT, 0600);
  EXPECT_FALSE(r.overlay_file(0, fd, &err));
  ::close(fd);
  EXPECT_NE(err.find(dir / "c.ckc"), std::string::npos) << err;
  EXPECT_NE(err.find("offset " + std::to_string(victim.offset)), std::string::npos) << err;
  std::vector<std::string> problems;
  std::vector<bool> overlay = {true};
  EXPECT_FALSE(r.verify(problems, &overlay));
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("offset " + std::to_string(victim.offset)), std::string::npos)
      << problems[0];
}

// ---------------------------------------------------------------------------------------
// materialize_entry

// The two-node store of core_layered_store.h.
class Layered : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ls_.build(store_, &err_)) << err_;
    ASSERT_TRUE(cat_.load(store_, &err_)) << err_;
  }

  // Materializes path into a file prefilled with garbage; returns its bytes.
  std::vector<uint8_t> materialize(const std::string& path, bool* ok) {
    std::string out = dir_ / "out";
    test::write_all(out, test::random_bytes(40000, 99));
    int fd = ::open(out.c_str(), O_RDWR);
    *ok = materialize_entry(store_, *cat_.find(path), fd, &err_);
    ::close(fd);
    return test::read_all(out);
  }

  TempDir dir_;
  std::string store_ = dir_ / "store";
  std::string err_;
  test::LayeredStore ls_;
  const OverlayFile &ov1_ = ls_.ov1, &ov2_ = ls_.ov2;
  const std::vector<uint8_t>& want_f_ = ls_.want_f;
  const std::vector<uint8_t>& want_g_ = ls_.want_g;
  Catalog cat_;
};

TEST_F(Layered, BaseThenOverlaysInManifestOrder) {
  ASSERT_EQ(want_f_.size(), 30000u);
  EXPECT_EQ(cat_.find("/d/f")->size, 30000u);
  bool ok = false;
  std::vector<uint8_t> got = materialize("/d/f", &ok);
  ASSERT_TRUE(ok) << err_;
  ASSERT_EQ(got.size(), want_f_.size());
  EXPECT_TRUE(got == want_f_);
  // Spot checks that the expectation itself is layered (so the test can fail).
  EXPECT_EQ(got[50], ov2_.node_view[50]) << "node 0's later overlay wins at [0, 100)";
  EXPECT_EQ(got[500], test::smooth_bytes(12000, 1)[500]) << "base where no overlay wrote";
  EXPECT_EQ(got[3000], ov1_.node_view[3000]);
  EXPECT_EQ(got[15000], 0) << "past the base, written by no node: zero";
  EXPECT_EQ(got[23500], ov2_.node_view[23500]) << "the later overlay wins the overlap";
  EXPECT_EQ(got[22000], ov1_.node_view[22000]);
}

TEST_F(Layered, OverlaysWithoutABase) {
  bool ok = false;
  std::vector<uint8_t> got = materialize("/d/g", &ok);
  ASSERT_TRUE(ok) << err_;
  ASSERT_EQ(got.size(), 5000u);
  EXPECT_TRUE(got == want_g_);
  EXPECT_EQ(got[3000], 0) << "a hole of every layer is zero";
}

TEST_F(Layered, TheManifestSizeExtendsTheResult) {
  CatalogEntry e = *cat_.find("/d/f");
  e.size = 33333;  // e.g. a set_size recorded by another node
  std::string out = dir_ / "big";
  int fd = ::open(out.c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_TRUE(materialize_entry(store_, e, fd, &err_)) << err_;
  ::close(fd);
  std::vector<uint8_t> want = want_f_;
  want.resize(33333, 0);
  EXPECT_TRUE(test::read_all(out) == want);
}

TEST_F(Layered, ErrorsNameTheLayerTheContainerAndTheOffset) {
  // A corrupt chunk in the second overlay of /d/f.
  ContainerReader r;
  ASSERT_TRUE(r.open(store_ + "/c-n0.ckc", &err_)) << err_;
  ChunkInfo victim = r.streams()[0].chunks[0];  // ov2_'s first extent
  std::vector<uint8_t> bytes = test::read_all(store_ + "/c-n0.ckc");
  bytes[victim.offset + 1] ^= 0x01;
  test::write_all(store_ + "/c-n0.ckc", bytes);
  bool ok = true;
  materialize("/d/f", &ok);
  EXPECT_FALSE(ok);
  EXPECT_NE(err_.find("overlay 2 of 2 (container c-n0.ckc)"), std::string::npos) << err_;
  EXPECT_NE(err_.find("offset " + std::to_string(victim.offset)), std::string::npos) << err_;
  // A missing overlay container, a bad file index, an invalid name.
  CatalogEntry e = *cat_.find("/d/g");
  e.overlays[0].container = "gone.ckc";
  std::string out = dir_ / "x";
  int fd = ::open(out.c_str(), O_RDWR | O_CREAT, 0600);
  EXPECT_FALSE(materialize_entry(store_, e, fd, &err_));
  EXPECT_NE(err_.find("overlay 1 of 2 (container gone.ckc)"), std::string::npos) << err_;
  e = *cat_.find("/d/g");
  e.overlays[1].file_index = 7;
  EXPECT_FALSE(materialize_entry(store_, e, fd, &err_));
  EXPECT_NE(err_.find("names file 7 but the container holds 2"), std::string::npos) << err_;
  e = *cat_.find("/d/f");
  e.container = "../store/c-base.ckc";
  EXPECT_FALSE(materialize_entry(store_, e, fd, &err_));
  EXPECT_NE(err_.find("invalid container"), std::string::npos) << err_;
  ::close(fd);
}

TEST_F(Layered, APlainEntryIsExactlyItsBase) {
  std::vector<test::TestFile> plain = {{"/d/p", test::random_bytes(7000, 8), {}, 0}};
  ASSERT_TRUE(test::build_container(store_ + "/c-p.ckc", plain, 1, 1000, "zstd", &err_)) << err_;
  ASSERT_TRUE(manifest::append_commit(store_, "c-p.ckc", {file("/d/p", 0, 7000, 0640, 1)}, &err_));
  ASSERT_TRUE(cat_.load(store_, &err_)) << err_;
  bool ok = false;
  std::vector<uint8_t> got = materialize("/d/p", &ok);
  ASSERT_TRUE(ok) << err_;
  EXPECT_TRUE(got == plain[0].content) << "the longer garbage underneath is gone";
}

}  // namespace
}  // namespace ckptfwd
