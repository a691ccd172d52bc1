// MappedFile (forwarder/staging/mapped_file.h): a private read gives back the file's bytes and the
// the content hash of them taken while they were read, in file order whatever order the slices came
// in; a mapping has no such hash.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "forwarder/staging/mapped_file.h"
#include "forwarder/staging/warm_memory.h"
#include "forwarder/util/worker_pool.h"
#include "store/container/content_hash.h"

namespace ckptfwd::fwd {
namespace {

struct MappedFileRead : ::testing::Test {
  std::string dir;
  void SetUp() override {
    char tmpl[] = "/tmp/ckptfwd-mapped-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
  }
  void TearDown() override {
    warm::drop_all();
    ASSERT_EQ(system(("rm -rf '" + dir + "'").c_str()), 0);
  }
  // A file of n bytes that differ from slice to slice (a hash taken out of order differs).
  std::vector<uint8_t> write_file(const std::string& name, uint64_t n) {
    std::vector<uint8_t> b(n);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (uint64_t i = 0; i < n; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      b[i] = static_cast<uint8_t>(x);
    }
    int fd = ::open((dir + "/" + name).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::write(fd, b.data(), n), static_cast<ssize_t>(n));
    ::close(fd);
    return b;
  }
};

TEST_F(MappedFileRead, PrivateReadHashesTheBytesInFileOrder) {
  WorkerPool pool(3);
  constexpr uint64_t kMiB = 1 << 20;
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, kMiB + 7, 2 * kMiB, 8 * kMiB, 13 * kMiB + 4093}) {
    for (WorkerPool* p : {static_cast<WorkerPool*>(nullptr), &pool}) {
      std::vector<uint8_t> bytes = write_file("f.bin", n);
      MappedFile m;
      std::string err;
      ASSERT_TRUE(m.read_private(dir + "/f.bin", n, p, &err)) << err;
      ASSERT_EQ(m.size(), n);
      EXPECT_TRUE(n == 0 || memcmp(m.data(), bytes.data(), n) == 0) << n;
      ASSERT_TRUE(m.read_hash().has_value()) << n;
      EXPECT_EQ(*m.read_hash(), ckptfwd::content_hash(bytes.data(), n))
          << n << (p ? " on the pool" : "");
      MappedFile moved(std::move(m));
      EXPECT_EQ(moved.read_hash(), ckptfwd::content_hash(bytes.data(), n)) << "kept when moved";
      EXPECT_FALSE(m.read_hash().has_value());
    }
  }
}

TEST_F(MappedFileRead, AShorterFileIsHashedAsFarAsItGoes) {
  WorkerPool pool(2);
  std::vector<uint8_t> bytes = write_file("short.bin", 5 << 20);
  MappedFile m;
  std::string err;
  ASSERT_TRUE(m.read_private(dir + "/short.bin", 9 << 20, &pool, &err)) << err;
  ASSERT_EQ(m.size(), bytes.size());
  EXPECT_EQ(m.read_hash(), ckptfwd::content_hash(bytes.data(), bytes.size()));
}

TEST_F(MappedFileRead, AMappingHasNoReadHash) {
  write_file("m.bin", 4096);
  MappedFile m;
  std::string err;
  ASSERT_TRUE(m.open(dir + "/m.bin", 4096, &err)) << err;
  EXPECT_EQ(m.size(), 4096u);
  EXPECT_FALSE(m.read_hash().has_value());
}

// A small file's copy: its bytes and their hash, kept as they were read when the file
// changes or goes afterwards (a mapping would show the change), never more than
// kCopyMax bytes, and a clear error for a file that is not there.
TEST_F(MappedFileRead, ASmallFileIsCopiedWithItsHash) {
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{4096}, MappedFile::kCopyMax}) {
    std::vector<uint8_t> bytes = write_file("s.bin", n);
    MappedFile m;
    std::string err;
    ASSERT_TRUE(m.copy_small(dir + "/s.bin", n + 10, &err)) << err;
    ASSERT_EQ(m.size(), n);
    EXPECT_TRUE(m.is_private());
    EXPECT_EQ(m.read_hash(), ckptfwd::content_hash(bytes.data(), n)) << n;
    write_file("s.bin", n);  // new bytes, then gone: the copy stays as read
    ASSERT_EQ(::unlink((dir + "/s.bin").c_str()), 0);
    MappedFile moved(std::move(m));
    ASSERT_EQ(moved.size(), n);
    EXPECT_TRUE(n == 0 || memcmp(moved.data(), bytes.data(), n) == 0) << n;
    moved.release(moved.data(), n);  // a no-op on the only copy
    EXPECT_TRUE(n == 0 || memcmp(moved.data(), bytes.data(), n) == 0) << n;
  }
  std::vector<uint8_t> big = write_file("big.bin", MappedFile::kCopyMax + 4096);
  MappedFile m;
  std::string err;
  ASSERT_TRUE(m.copy_small(dir + "/big.bin", big.size(), &err)) << err;
  EXPECT_EQ(m.size(), MappedFile::kCopyMax);
  MappedFile gone;
  EXPECT_FALSE(gone.copy_small(dir + "/none.bin", 10, &err));
  EXPECT_NE(err.find("none.bin"), std::string::npos) << err;
}

// Populating the page tables of a mapping whose file was cut meanwhile (an in-place read
// of a file truncated by its writer) must not raise SIGBUS: the kernel refuses the pages
// past the end, and the bytes before it read as they are.
TEST_F(MappedFileRead, PopulatingPastACutFileDoesNotFault) {
  std::vector<uint8_t> bytes = write_file("cut.bin", 3 * 4096);
  MappedFile m;
  std::string err;
  ASSERT_TRUE(m.open(dir + "/cut.bin", bytes.size(), &err)) << err;
  ASSERT_EQ(truncate((dir + "/cut.bin").c_str(), 4096), 0);
  populate_for_read(m.data(), m.size());  // pages 2 and 3 are past the end now
  populate_for_read(m.data() + 100, 0);   // nothing
  EXPECT_EQ(memcmp(m.data(), bytes.data(), 4096), 0);
}

}  // namespace
}  // namespace ckptfwd::fwd
