// fpzip chunks in containers (codec/chain/typed.h, FpzipDecodeGrant): written freely,
// decoded only from a container the user owns and only after the stored bytes matched
// their checksum; a corrupt chunk and another user's container give an error, never a
// decode of the stream.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "codec/chain/chain_format.h"
#include "codec/chain/typed.h"
#include "codec/codec.h"
#include "core_test_util.h"
#include "store/container/chunk_encode.h"
#include "store/container/container.h"
#include "store/container/content_hash.h"

namespace ckptfwd {
namespace {

using codec::chain::Entropy;
using test::TempDir;

codec::Chain fpzip_chain() {
  codec::chain::Plan p;
  p.entropy = Entropy::kFpzip;
  p.level = 0;
  codec::Chain c;
  c.spec = codec::chain::serialize_plan(p);
  c.name = codec::chain::plan_name(p);
  return c;
}

std::vector<uint8_t> smooth_f64(size_t n) {
  std::vector<uint8_t> out(n * 8);
  for (size_t i = 0; i < n; ++i) {
    double v = std::sin(static_cast<double>(i) * 0.01) * 100.0 + static_cast<double>(i % 64) * 1e-3;
    memcpy(out.data() + i * 8, &v, 8);
  }
  return out;
}

// One file of `content`, one F64 stream coded with fpzip; *chunk_off: where its chunk is.
void write_fpzip_container(const std::string& path, const std::vector<uint8_t>& content,
                           uint64_t* chunk_off) {
  EncodedChunk c = encode_chunk_typed(content.data(), content.size(),
                                      content_hash(content.data(), content.size()), fpzip_chain(),
                                      codec::Layout{"F64LE", {64}}, "zstd", 3);
  ASSERT_EQ(c.codec, static_cast<uint8_t>(CodecId::kChain));
  ASSERT_EQ(
      codec::describe_payload(c.bytes.data(), c.bytes.size()).find("fpzip") != std::string::npos,
      true)
      << codec::describe_payload(c.bytes.data(), c.bytes.size());
  ContainerWriter w;
  std::string err;
  ASSERT_TRUE(w.open(path, &err, false)) << err;
  uint32_t s = w.add_stream("var", "F64LE", "aware");
  ASSERT_TRUE(w.append_chunk(s, c, &err)) << err;
  FileEntry e;
  e.path = "/ckpt/f.bin";
  e.rank = 0;
  e.size = content.size();
  e.hash = content_hash(content.data(), content.size());
  e.ranges.push_back(FileRange{0, content.size(), s, 0});
  w.add_file(e);
  ASSERT_TRUE(w.commit(&err)) << err;
  ContainerReader r;
  ASSERT_TRUE(r.open(path, &err)) << err;
  *chunk_off = r.streams()[0].chunks[0].offset;
}

// One fpzip container, c.ckc, in a fresh directory; off: where its chunk is.
class FpzipContainer : public ::testing::Test {
 protected:
  void SetUp() override { write_fpzip_container(path, content, &off); }
  // Opens the container and reads its file, which must fail: the error text.
  std::string read_failure(bool fpzip_decode = true) {
    ContainerReader r;
    r.set_fpzip_decode(fpzip_decode);
    std::string err;
    EXPECT_TRUE(r.open(path, &err)) << err;
    std::vector<uint8_t> back;
    EXPECT_FALSE(r.read_file(0, back, &err));
    return err;
  }
  TempDir dir;
  const std::string path = dir / "c.ckc";
  const std::vector<uint8_t> content = smooth_f64(20000);
  uint64_t off = 0;
};

TEST_F(FpzipContainer, OwnContainerDecodesWithoutGlobalTrust) {
  ASSERT_FALSE(codec::fpzip_trusted());
  ContainerReader r;
  std::string err;
  ASSERT_TRUE(r.open(path, &err)) << err;
  std::vector<uint8_t> back;
  ASSERT_TRUE(r.read_file(0, back, &err)) << err;
  EXPECT_EQ(back, content);
  std::vector<std::string> problems;
  EXPECT_TRUE(r.verify(problems)) << (problems.empty() ? "" : problems[0]);
}

TEST_F(FpzipContainer, AReaderToldNotToDecodesNone) {
  std::string err = read_failure(/*fpzip_decode=*/false);
  EXPECT_NE(err.find("decompress"), std::string::npos) << err;
}

TEST_F(FpzipContainer, ACorruptChunkIsCaughtByItsChecksumNotDecoded) {
  // Zeros over the fpzip stream (a zero range is what makes its decoder read on forever).
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> zeros(512, 0);
  ASSERT_EQ(pwrite(fd, zeros.data(), zeros.size(), static_cast<off_t>(off + 64)), 512);
  ::close(fd);
  std::string err = read_failure();
  EXPECT_NE(err.find("checksum"), std::string::npos) << err;
}

TEST_F(FpzipContainer, AnotherUsersContainerIsNotDecoded) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the file to another user";
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
  std::string err = read_failure();
  EXPECT_NE(err.find("another user"), std::string::npos) << err;
}

TEST(FpzipGrant, AGrantIsThisThreadsAndNests) {
  EXPECT_FALSE(codec::fpzip_decode_allowed());
  {
    codec::FpzipDecodeGrant yes(true);
    EXPECT_TRUE(codec::fpzip_decode_allowed());
    bool other = true;
    std::thread([&] { other = codec::fpzip_decode_allowed(); }).join();
    EXPECT_FALSE(other);
    {
      codec::FpzipDecodeGrant no(false);
      EXPECT_FALSE(codec::fpzip_decode_allowed());
    }
    EXPECT_TRUE(codec::fpzip_decode_allowed());
  }
  EXPECT_FALSE(codec::fpzip_decode_allowed());
}

}  // namespace
}  // namespace ckptfwd
