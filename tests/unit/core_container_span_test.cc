// ContainerReader::read_span: any part of a file, from the chunks that hold it alone, each
// checked against its checksum (the file's hash covers the whole file).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core_test_util.h"
#include "store/container/container.h"

namespace ckptfwd {
namespace {

using test::build_container;
using test::random_bytes;
using test::smooth_bytes;
using test::TempDir;
using test::TestFile;

std::vector<uint8_t> slice(const std::vector<uint8_t>& v, uint64_t off, uint64_t len) {
  return {v.begin() + off, v.begin() + off + len};
}

TEST(ContainerSpan, AnyPartOfAFileComesBackExact) {
  TempDir dir;
  std::vector<TestFile> files;
  files.push_back({"/ckpt/a.bin", smooth_bytes(100000, 1), {}, 0});
  // Holes: a file whose middle and tail were never written.
  TestFile holes{"/ckpt/holes.bin", smooth_bytes(70000, 3), {{0, 1000}, {30000, 5000}}, 1};
  std::fill(holes.content.begin() + 1000, holes.content.begin() + 30000, 0);
  std::fill(holes.content.begin() + 35000, holes.content.end(), 0);
  files.push_back(holes);
  files.push_back({"/ckpt/b.bin", random_bytes(50000, 2), {}, 0});
  std::string err;
  ASSERT_TRUE(build_container(dir / "c.ckc", files, 2, 4096, "zstd", &err)) << err;
  ContainerReader r;
  ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
  std::vector<uint8_t> out;
  for (size_t i = 0; i < files.size(); ++i) {
    const uint64_t size = files[i].content.size();
    for (auto [off, len] : std::vector<std::pair<uint64_t, uint64_t>>{{0, size},
                                                                      {0, 1},
                                                                      {size - 1, 1},
                                                                      {4095, 2},
                                                                      {999, 29002},
                                                                      {31000, 10000},
                                                                      {size, 0}}) {
      ASSERT_TRUE(r.read_span(i, off, len, out, &err))
          << files[i].path << " " << off << ": " << err;
      EXPECT_EQ(out, slice(files[i].content, off, len))
          << files[i].path << " " << off << "+" << len;
    }
  }
}

TEST(ContainerSpan, OnlyTheChunksHoldingTheSpanAreDecoded) {
  TempDir dir;
  std::vector<TestFile> files = {{"/ckpt/a.bin", smooth_bytes(100000, 1), {}, 0}};
  std::string err;
  ASSERT_TRUE(build_container(dir / "c.ckc", files, 1, 4096, "zstd", &err)) << err;
  ContainerReader r;
  ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
  ASSERT_GE(r.streams()[0].chunks.size(), 24u);
  std::vector<uint8_t> out;
  uint64_t decoded = 0;
  // Inside chunk 5 alone.
  ASSERT_TRUE(r.read_span(0, 5 * 4096 + 10, 100, out, &err, &decoded)) << err;
  EXPECT_EQ(decoded, 4096u);
  // Across chunks 5 and 6: chunk 5 was counted before.
  ASSERT_TRUE(r.read_span(0, 5 * 4096 + 4000, 200, out, &err, &decoded)) << err;
  EXPECT_EQ(decoded, 2u * 4096);
  EXPECT_EQ(out, slice(files[0].content, 5 * 4096 + 4000, 200));
}

TEST(ContainerSpan, ASpanOutsideTheFileIsRefused) {
  TempDir dir;
  std::vector<TestFile> files = {{"/ckpt/a.bin", smooth_bytes(1000, 1), {}, 0}};
  std::string err;
  ASSERT_TRUE(build_container(dir / "c.ckc", files, 1, 4096, "zstd", &err)) << err;
  ContainerReader r;
  ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
  std::vector<uint8_t> out;
  EXPECT_FALSE(r.read_span(0, 900, 101, out, &err));
  EXPECT_NE(err.find("not inside file '/ckpt/a.bin'"), std::string::npos) << err;
  EXPECT_FALSE(r.read_span(0, UINT64_MAX, 2, out, &err));
  EXPECT_FALSE(r.read_span(1, 0, 1, out, &err));
}

TEST(ContainerSpan, ACorruptChunkFailsTheSpansThatUseItAndNoOther) {
  TempDir dir;
  std::vector<TestFile> files = {{"/ckpt/a.bin", smooth_bytes(40000, 1), {}, 0}};
  std::string err;
  const std::string path = dir / "c.ckc";
  ASSERT_TRUE(build_container(path, files, 1, 4096, "raw", &err)) << err;
  ContainerReader probe;
  ASSERT_TRUE(probe.open(path, &err)) << err;
  const ChunkInfo victim = probe.streams()[0].chunks[3];
  std::vector<uint8_t> bytes = test::read_all(path);
  bytes[victim.offset + 100] ^= 0x01;  // raw chunks decode to whatever they hold
  test::write_all(path, bytes);
  ContainerReader r;
  ASSERT_TRUE(r.open(path, &err)) << err;
  std::vector<uint8_t> out;
  EXPECT_FALSE(r.read_span(0, 3 * 4096 + 50, 100, out, &err));
  EXPECT_NE(err.find("offset " + std::to_string(victim.offset)), std::string::npos) << err;
  EXPECT_NE(err.find("checksum"), std::string::npos) << err;
  ASSERT_TRUE(r.read_span(0, 0, 3 * 4096, out, &err)) << err;
  EXPECT_EQ(out, slice(files[0].content, 0, 3 * 4096));
  ASSERT_TRUE(r.read_span(0, 4 * 4096, 4096, out, &err)) << err;
}

}  // namespace
}  // namespace ckptfwd
