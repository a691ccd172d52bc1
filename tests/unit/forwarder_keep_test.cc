// CKPTFWD_KEEP end to end in the forwarder: committing newer versions deletes the
// containers that hold nothing of the kept versions, after a `drop` manifest record, and
// everything kept still restores.
#include <map>

#include "forwarder_test_util.h"
#include "store/container/container.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd::test {
namespace {

size_t container_files(const std::string& store) {
  size_t n = 0;
  for (auto& e : fs::directory_iterator(store)) n += e.path().extension() == ".ckc";
  return n;
}

std::string restored(const std::string& store, const CatalogEntry& e) {
  ContainerReader r;
  std::string err;
  EXPECT_TRUE(r.open(store + "/" + e.container, &err)) << err;
  std::vector<uint8_t> got;
  EXPECT_TRUE(r.read_file(e.file_index, got, &err)) << err;
  return std::string(got.begin(), got.end());
}

TEST_F(ForwarderTest, KeepOneDeletesContainersOfSupersededVersions) {
  cfg_.keep = 1;
  start();
  auto c = client();
  std::string last_a, last_b;
  for (int step = 0; step < 4; ++step) {
    last_a = payload(4000, 10 + step);
    last_b = payload(3000, 20 + step);
    write_version(*c, data_ + "/a", last_a);
    write_version(*c, data_ + "/b", last_b);
    ASSERT_EQ(c->call({"DRAIN"})[0], "OK");  // one batch per step
  }
  Catalog cat;
  std::string err;
  ASSERT_TRUE(cat.load(store(), &err)) << err;
  EXPECT_TRUE(cat.problems().empty());
  EXPECT_EQ(cat.containers().size(), 1u) << "only the newest step's container is named";
  EXPECT_EQ(container_files(store()), 1u) << "and the others are deleted";
  ASSERT_NE(cat.find(data_ + "/a"), nullptr);
  EXPECT_EQ(restored(store(), *cat.find(data_ + "/a")), last_a);
  EXPECT_EQ(restored(store(), *cat.find(data_ + "/b")), last_b);
  EXPECT_EQ(read_through(*c, data_ + "/a"), last_a);
  auto js = c->call({"STATS"});
  EXPECT_NE(js[1].find("\"containers_removed\":3"), std::string::npos) << js[1];
}

TEST_F(ForwarderTest, KeepTwoKeepsThePreviousCheckpointAndUnlinkedFilesGoLater) {
  cfg_.keep = 2;
  start();
  auto c = client();
  for (int step = 0; step < 3; ++step) {
    write_version(*c, data_ + "/ckpt", payload(5000, step));
    ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  }
  EXPECT_EQ(container_files(store()), 2u) << "steps 1 and 2";
  ASSERT_EQ(c->call({"UNLINK", data_ + "/ckpt"})[0], "OK");
  write_version(*c, data_ + "/other", payload(100, 9));
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  // The unlinked file's last version is its newest superseded one (kept); step 1 goes.
  EXPECT_EQ(container_files(store()), 2u) << "step 2 and the new one; MANIFEST:\n"
                                          << read_file(store() + "/MANIFEST");
  Catalog cat;
  std::string err;
  ASSERT_TRUE(cat.load(store(), &err)) << err;
  EXPECT_TRUE(cat.problems().empty());
  EXPECT_EQ(cat.find(data_ + "/ckpt"), nullptr);
}

TEST_F(ForwarderTest, KeepZeroKeepsEveryContainer) {
  start();
  auto c = client();
  for (int step = 0; step < 3; ++step) {
    write_version(*c, data_ + "/ckpt", payload(5000, step));
    ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  }
  EXPECT_EQ(container_files(store()), 3u);
}

}  // namespace
}  // namespace ckptfwd::fwd::test
