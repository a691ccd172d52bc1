// Codecs: round trips, size checks, corrupt input rejected; encode_chunk's raw fallback.
#include <gtest/gtest.h>

#include "base/pause_point.h"
#include "codec/codec.h"
#include "core_test_util.h"
#include "store/container/chunk_encode.h"
#include "store/container/container.h"

namespace ckptfwd {
namespace {

using test::random_bytes;
using test::smooth_bytes;

std::vector<uint8_t> pack(const Codec& c, const std::vector<uint8_t>& in, int level = 3) {
  std::vector<uint8_t> out;
  EXPECT_TRUE(c.compress(in.data(), in.size(), level, out)) << c.name();
  return out;
}

class CodecTest : public ::testing::TestWithParam<const char*> {
 protected:
  const Codec& codec() const { return *codec_by_name(GetParam()); }
};

TEST_P(CodecTest, RoundTripsEmptySmallLargeAndRandom) {
  for (const auto& in : {std::vector<uint8_t>{}, std::vector<uint8_t>{42}, smooth_bytes(1 << 20, 1),
                         random_bytes(300000, 2)}) {
    std::vector<uint8_t> packed = pack(codec(), in);
    std::vector<uint8_t> back(in.size() + 1, 0xEE);
    ASSERT_TRUE(codec().decompress(packed.data(), packed.size(), back.data(), in.size()))
        << codec().name() << " n=" << in.size();
    EXPECT_EQ(back[in.size()], 0xEE) << "wrote past raw_n";
    back.resize(in.size());
    EXPECT_EQ(back, in);
  }
}

TEST_P(CodecTest, CompressAppendsToExistingOutput) {
  std::vector<uint8_t> in = smooth_bytes(5000, 3);
  std::vector<uint8_t> out = {1, 2, 3};
  ASSERT_TRUE(codec().compress(in.data(), in.size(), 3, out));
  EXPECT_EQ(out[0], 1);
  std::vector<uint8_t> back(in.size());
  ASSERT_TRUE(codec().decompress(out.data() + 3, out.size() - 3, back.data(), back.size()));
  EXPECT_EQ(back, in);
}

TEST_P(CodecTest, ExtremeLevelsAreClampedNotRejected) {
  std::vector<uint8_t> in = smooth_bytes(10000, 4);
  for (int level : {-1000, 0, 1, 19, 1000}) {
    std::vector<uint8_t> packed = pack(codec(), in, level);
    std::vector<uint8_t> back(in.size());
    ASSERT_TRUE(codec().decompress(packed.data(), packed.size(), back.data(), back.size()));
    EXPECT_EQ(back, in) << "level " << level;
  }
}

TEST_P(CodecTest, WrongRawSizeIsRejected) {
  std::vector<uint8_t> in = smooth_bytes(4096, 5);
  std::vector<uint8_t> packed = pack(codec(), in);
  std::vector<uint8_t> back(in.size() + 100);
  EXPECT_FALSE(codec().decompress(packed.data(), packed.size(), back.data(), in.size() - 1));
  EXPECT_FALSE(codec().decompress(packed.data(), packed.size(), back.data(), in.size() + 1));
}

TEST_P(CodecTest, TruncatedAndGarbageInputIsRejected) {
  std::vector<uint8_t> in = smooth_bytes(65536, 6);
  std::vector<uint8_t> packed = pack(codec(), in);
  std::vector<uint8_t> back(in.size());
  for (size_t cut : {size_t{0}, size_t{1}, packed.size() / 2, packed.size() - 1})
    EXPECT_FALSE(codec().decompress(packed.data(), cut, back.data(), back.size()))
        << codec().name() << " cut at " << cut;
  std::vector<uint8_t> garbage = random_bytes(packed.size(), 7);
  if (std::string(codec().name()) != "raw") {  // raw accepts any bytes of the right size
    EXPECT_FALSE(codec().decompress(garbage.data(), garbage.size(), back.data(), back.size()));
  }
  // Trailing bytes after a complete stream are corruption too.
  std::vector<uint8_t> longer = packed;
  longer.push_back(0);
  EXPECT_FALSE(codec().decompress(longer.data(), longer.size(), back.data(), back.size()));
}

INSTANTIATE_TEST_SUITE_P(All, CodecTest, ::testing::Values("raw", "zstd", "zlib", "chain"));

// A large input is coded in pieces with a pause point between them (base/pause_point.h),
// into one frame that decodes like any other; a small one makes no pause.
TEST(Codec, ZstdPausesBetweenThePiecesOfALargeInputAndStaysOneFrame) {
  const Codec& zstd = *codec_by_name("zstd");
  int pauses = 0;
  PauseScope scope([](void* n) { ++*static_cast<int*>(n); }, &pauses);
  std::vector<uint8_t> in = smooth_bytes(3 << 20, 6), tail = random_bytes(654321, 7);
  in.insert(in.end(), tail.begin(), tail.end());
  std::vector<uint8_t> packed = pack(zstd, in);
  EXPECT_EQ(pauses, 3) << "one pause between each two of the 4 pieces";
  ASSERT_LT(packed.size(), in.size());
  std::vector<uint8_t> back(in.size());
  ASSERT_TRUE(zstd.decompress(packed.data(), packed.size(), back.data(), back.size()));
  EXPECT_EQ(back, in);
  pauses = 0;
  pack(zstd, smooth_bytes(1 << 20, 8));
  EXPECT_EQ(pauses, 0);
}

// A chunk waits in memory for the container's writer with the bytes it was given: one
// that compressed well holds no room for its whole zstd bound (4 MiB for a 4 MiB chunk),
// for typed chains and plain zstd alike, and what follows a chain's header is appended.
TEST(Codec, AChunkThatCompressedWellKeepsNoRoomForItsBound) {
  std::vector<uint8_t> zeros(4 << 20, 0);
  for (const char* name : {"zstd", "chain"}) {
    std::vector<uint8_t> packed = pack(*codec_by_name(name), zeros);
    EXPECT_LT(packed.size(), 4096u) << name;
    EXPECT_LE(packed.capacity(), 2 * packed.size() + 4096) << name;
    std::vector<uint8_t> back(zeros.size(), 1);
    ASSERT_TRUE(
        codec_by_name(name)->decompress(packed.data(), packed.size(), back.data(), back.size()));
    EXPECT_EQ(back, zeros) << name;
  }
  EncodedChunk c = encode_chunk(zeros.data(), zeros.size(), "zstd", 3);
  EXPECT_LE(c.bytes.capacity(), 2 * c.bytes.size() + 4096);
}

TEST(Codec, ZlibDetectsAFlippedByte) {
  const Codec& z = *codec_by_name("zlib");
  std::vector<uint8_t> in = smooth_bytes(100000, 8);
  std::vector<uint8_t> packed = pack(z, in);
  packed[packed.size() / 2] ^= 0x40;
  std::vector<uint8_t> back(in.size());
  // Either the stream breaks or the adler32 check fails: never a silent success.
  EXPECT_FALSE(z.decompress(packed.data(), packed.size(), back.data(), back.size()));
}

TEST(Codec, LookupByIdAndName) {
  for (auto [id, name] : {std::pair{CodecId::kRaw, "raw"}, std::pair{CodecId::kZstd, "zstd"},
                          std::pair{CodecId::kZlib, "zlib"}, std::pair{CodecId::kChain, "chain"}}) {
    const Codec* c = codec_by_id(static_cast<uint8_t>(id));
    ASSERT_NE(c, nullptr);
    EXPECT_STREQ(c->name(), name);
    EXPECT_EQ(codec_by_name(name), c);
  }
  EXPECT_EQ(codec_by_id(4), nullptr);
  EXPECT_EQ(codec_by_id(255), nullptr);
  EXPECT_EQ(codec_by_name("lz4"), nullptr);
  EXPECT_EQ(codec_by_name(""), nullptr);
}

TEST(EncodeChunk, CompressesWhenItPaysAndStoresRawOtherwise) {
  std::vector<uint8_t> smooth = smooth_bytes(1 << 16, 9);
  EncodedChunk c = encode_chunk(smooth.data(), smooth.size(), "zstd", 3);
  EXPECT_EQ(c.codec, static_cast<uint8_t>(CodecId::kZstd));
  EXPECT_LT(c.bytes.size(), smooth.size() / 4);
  EXPECT_EQ(c.raw_size, smooth.size());
  EXPECT_EQ(c.raw_hash, content_hash(smooth.data(), smooth.size()));
  EXPECT_EQ(c.comp_hash, content_hash(c.bytes.data(), c.bytes.size()));

  std::vector<uint8_t> noise = random_bytes(1 << 16, 10);
  for (const char* name : {"zstd", "zlib"}) {
    EncodedChunk r = encode_chunk(noise.data(), noise.size(), name, 3);
    EXPECT_EQ(r.codec, static_cast<uint8_t>(CodecId::kRaw)) << name;
    EXPECT_EQ(r.bytes, noise);
  }
  EncodedChunk empty = encode_chunk(nullptr, 0, "zstd", 3);
  EXPECT_EQ(empty.codec, static_cast<uint8_t>(CodecId::kRaw));
  EXPECT_EQ(empty.raw_size, 0u);
  EXPECT_TRUE(empty.bytes.empty());

  EncodedChunk unknown = encode_chunk(smooth.data(), 100, "no-such-codec", 3);
  EXPECT_EQ(unknown.codec, static_cast<uint8_t>(CodecId::kRaw));
}

}  // namespace
}  // namespace ckptfwd
