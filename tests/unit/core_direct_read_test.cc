// DirectRange: a chunk's range read with O_DIRECT (widened to aligned blocks) or through
// the page cache gives the file's bytes at every offset, to the end of a file whose last
// block is short; a range past the end fails either way; a container restores the same
// bytes with direct reads on and off.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include "codec/codec.h"
#include "core_test_util.h"
#include "store/container/container.h"
#include "store/container/direct_read.h"

namespace ckptfwd {
namespace {

using test::random_bytes;
using test::TempDir;

TEST(DirectRange, EveryRangeComesBackExactDirectOrThroughThePageCache) {
  TempDir dir;
  const std::string path = dir / "c.bin";
  const std::vector<uint8_t> data = random_bytes((3u << 20) + 777, 21);  // last block short
  test::write_all(path, data);
  const size_t big = DirectRange::kMinDirectBytes, n = data.size();
  const std::pair<size_t, size_t> ranges[] = {{0, big},
                                              {1, big},
                                              {4095, (1u << 20) + 3},
                                              {4096, big + 4096},
                                              {n - big, big},
                                              {n - big - 5, big},
                                              {n - (2u << 20), 2u << 20},
                                              {10, 100},
                                              {n - 1, 1},
                                              {0, n}};
  for (bool on : {true, false}) {
    int fd = ::open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    DirectRange d;
    d.open(path.c_str(), on);
    AlignedBuffer buf;
    for (const auto& [off, len] : ranges) {
      const uint8_t* got = nullptr;
      ASSERT_TRUE(d.read(fd, off, len, buf, &got)) << off << "+" << len << " on=" << on;
      EXPECT_EQ(memcmp(got, data.data() + off, len), 0) << off << "+" << len << " on=" << on;
    }
    // On a disk file system that takes O_DIRECT it stays on; off is off.
    int probe = ::open(path.c_str(), O_RDONLY | O_DIRECT);
    EXPECT_EQ(d.direct(), on && probe >= 0);
    if (probe >= 0) ::close(probe);
    ::close(fd);
  }
}

TEST(DirectRange, ARangePastTheEndFailsAndLaterRangesStillRead) {
  TempDir dir;
  const std::string path = dir / "c.bin";
  const std::vector<uint8_t> data = random_bytes(1u << 20, 22);
  test::write_all(path, data);
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  DirectRange d;
  d.open(path.c_str(), true);
  AlignedBuffer buf;
  const uint8_t* got = nullptr;
  EXPECT_FALSE(d.read(fd, data.size() - 100, DirectRange::kMinDirectBytes, buf, &got));
  EXPECT_FALSE(d.read(fd, data.size() + 4096, 10, buf, &got));
  ASSERT_TRUE(d.read(fd, 5, DirectRange::kMinDirectBytes, buf, &got));
  EXPECT_EQ(memcmp(got, data.data() + 5, DirectRange::kMinDirectBytes), 0);
  ::close(fd);
}

TEST(DirectRange, AContainerRestoresTheSameBytesWithDirectReadsOnAndOff) {
  TempDir dir;
  const std::vector<uint8_t> raw = random_bytes((5u << 20) + 333, 23);
  const std::string path = dir / "c.ckc";
  std::vector<test::TestFile> files = {{"/ckpt/f.bin", raw, {}, 0}};
  std::string err;
  // Chunks of 1 MiB + 11 bytes: at unaligned offsets in the container.
  ASSERT_TRUE(test::build_container(path, files, 1, (1u << 20) + 11, "zstd", &err)) << err;
  for (bool on : {true, false}) {
    set_direct_read_default(on);
    ContainerReader r;
    r.set_decode_threads(2);
    ASSERT_TRUE(r.open(path, &err)) << err;
    std::vector<uint8_t> back;
    ASSERT_TRUE(r.read_file(0, back, &err)) << err;
    EXPECT_TRUE(back == raw) << "direct " << on;
    std::vector<std::string> problems;
    EXPECT_TRUE(r.verify(problems)) << (problems.empty() ? "" : problems[0]);
  }
  set_direct_read_default(true);
}

}  // namespace
}  // namespace ckptfwd
