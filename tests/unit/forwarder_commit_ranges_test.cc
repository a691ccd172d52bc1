// The ranges a new file (`create`) commits when pages of zeros no writer wrote are data
// pages of its staged file: on tmpfs (where the forwarder stages by default) a read of a
// hole through a mapping allocates such a page. Before, they were committed as this
// node's bytes, and a new file written by two nodes got zeros over the other node's bytes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "forwarder/pipeline/commit_ranges.h"
#include "forwarder/staging/extents.h"

namespace ckptfwd::fwd {
namespace {

constexpr uint64_t kSize = 1 << 20, kHalf = kSize / 2;

class CreatedRanges : public ::testing::Test {
 protected:
  void SetUp() override {
    struct statfs st {};
    if (::statfs("/dev/shm", &st) != 0 || st.f_type != TMPFS_MAGIC)
      GTEST_SKIP() << "/dev/shm is not tmpfs: a mapped read of a hole allocates nothing";
    char dir[] = "/dev/shm/ckf-ranges.XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    path_ = dir_ + "/staged";
    // This node wrote [kHalf, kSize) of a new file; [0, kHalf) is another node's: a hole.
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd_, 0);
    std::vector<uint8_t> mine(kSize - kHalf, 0x5a);
    ASSERT_EQ(::pwrite(fd_, mine.data(), mine.size(), kHalf), static_cast<ssize_t>(mine.size()));
    void* m = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    ASSERT_NE(m, MAP_FAILED);
    map_ = static_cast<uint8_t*>(m);
  }
  void TearDown() override {
    if (map_) ::munmap(map_, kSize);
    if (fd_ >= 0) ::close(fd_);
    if (!dir_.empty()) {
      ::unlink(path_.c_str());
      ::rmdir(dir_.c_str());
    }
  }

  // Reads one byte of the hole at off through the mapping (as the HDF5 signature probe
  // does): tmpfs gives the file a page of zeros there.
  void read_through_mapping(uint64_t off) {
    volatile uint8_t b = map_[off];
    (void)b;
  }

  Extents committed(bool extents_known) {
    BatchFile f;
    f.data_path = path_;
    f.size = kSize;
    f.created = true;
    f.extents_unknown = !extents_known;
    if (extents_known) f.extents = {{kHalf, kSize}};
    FileEntry e;
    Extents ext, hashed;
    std::string err;
    EXPECT_TRUE(commit_extents(f, map_, kSize, e, ext, &hashed, &err)) << err;
    EXPECT_EQ(hashed, (Extents{{0, kSize}}));  // the whole-file hash, holes as zeros
    return ext;
  }

  std::string dir_, path_;
  int fd_ = -1;
  uint8_t* map_ = nullptr;
};

TEST_F(CreatedRanges, PagesAMappedReadMadeAreNotThisNodesBytes) {
  for (uint64_t off : {0u, 512u, 4096u, 8192u, 65536u, 262144u}) read_through_mapping(off);
  Extents data;
  std::string err;
  ASSERT_TRUE(data_extents_of(path_, data, &err)) << err;
  ASSERT_EQ(data.front().begin, 0u) << "the mapped reads made no data page: nothing to test";
  EXPECT_EQ(committed(true), (Extents{{kHalf, kSize}}));
  EXPECT_EQ(committed(false), (Extents{{kHalf, kSize}}));
}

TEST_F(CreatedRanges, BytesWrittenThroughAMappingAreStillCommitted) {
  read_through_mapping(8192);
  map_[3 * 4096 + 10] = 7;  // a write the library did not see, in another page of the hole
  Extents want{{3 * 4096, 4 * 4096}, {kHalf, kSize}};
  EXPECT_EQ(committed(true), want);
  EXPECT_EQ(committed(false), want);
}

}  // namespace
}  // namespace ckptfwd::fwd
