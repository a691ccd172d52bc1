// Reference chunks (store/container/chunk_ref.h, container format version 4): the encoding and its
// hostile-input checks, and the reader resolving a reference in the container it names,
// with an error naming both containers when that one is missing, replaced or corrupt.
#include <gtest/gtest.h>

#include <cstdio>

#include "codec/codec.h"
#include "core_test_util.h"
#include "store/container/chunk_encode.h"
#include "store/container/chunk_ref.h"
#include "store/container/container.h"

namespace ckptfwd {
namespace {

using test::TempDir;

std::vector<uint8_t> bytes_of(size_t n, unsigned seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed * 2654435761u + 7;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    v[i] = static_cast<uint8_t>(i % 3 ? i / 64 : x >> 24);
  }
  return v;
}

const char* kKey = "grid_F64LE_Array1D";

// The one file of the test containers: `a` then `b`, all of stream 0.
FileEntry file_of(const char* path, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  FileEntry f;
  f.path = path;
  f.size = a.size() + b.size();
  f.ranges = {{0, f.size, 0, 0}};
  std::vector<uint8_t> all(a);
  all.insert(all.end(), b.begin(), b.end());
  f.hash = content_hash(all.data(), all.size());
  return f;
}

// A container of one file, stream kKey cut in two chunks of `a` and `b` (zstd).
ContainerIdentity write_original(const std::string& path, const std::vector<uint8_t>& a,
                                 const std::vector<uint8_t>& b) {
  ContainerWriter w;
  std::string err;
  EXPECT_TRUE(w.open(path, &err)) << err;
  uint32_t s = w.add_stream(kKey, "F64LE", "aware");
  EXPECT_TRUE(w.append_chunk(s, encode_chunk(a.data(), a.size(), "zstd", 1), &err)) << err;
  EXPECT_TRUE(w.append_chunk(s, encode_chunk(b.data(), b.size(), "zstd", 1), &err)) << err;
  w.add_file(file_of("/ckpt/orig", a, b));
  EXPECT_TRUE(w.commit(&err)) << err;
  return w.identity();
}

// A container whose first chunk refers to chunk `chunk` of `target` (raw bytes `a`) and
// whose second chunk holds `b` itself.
void write_referrer(const std::string& path, const std::string& target, const ContainerIdentity& id,
                    uint32_t chunk, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  ContainerWriter w;
  std::string err;
  ASSERT_TRUE(w.open(path, &err)) << err;
  uint32_t s = w.add_stream(kKey, "F64LE", "aware");
  ChunkRef r{target, id, kKey, 0, chunk};
  ASSERT_TRUE(w.append_chunk(
      s, make_ref_chunk(r, static_cast<uint32_t>(a.size()), content_hash(a.data(), a.size())),
      &err))
      << err;
  ASSERT_TRUE(w.append_chunk(s, encode_chunk(b.data(), b.size(), "zstd", 1), &err)) << err;
  w.add_file(file_of("/ckpt/new", a, b));
  ASSERT_TRUE(w.commit(&err)) << err;
}

uint32_t version_of(const std::string& path) {
  auto v = test::read_all(path);
  return v.size() < 12 ? 0 : v[8] | v[9] << 8 | v[10] << 16 | uint32_t(v[11]) << 24;
}

TEST(ChunkRef, RoundTrip) {
  ChunkRef r{"c-n-1-0.ckc", {12345, 0xabcdef}, kKey, 3, 7};
  std::vector<uint8_t> enc = encode_chunk_ref(r);
  ChunkRef back;
  std::string err;
  ASSERT_TRUE(decode_chunk_ref(enc.data(), enc.size(), back, &err)) << err;
  EXPECT_EQ(back, r);
  // Every truncation and a trailing byte are refused.
  for (size_t n = 0; n < enc.size(); ++n)
    EXPECT_FALSE(decode_chunk_ref(enc.data(), n, back, &err)) << n;
  enc.push_back(0);
  EXPECT_FALSE(decode_chunk_ref(enc.data(), enc.size(), back, &err));
  EXPECT_NE(err.find("trailing"), std::string::npos) << err;
}

TEST(ChunkRef, HostileNamesRejectedByTheParser) {
  for (const std::string& name : std::vector<std::string>{
           "../x.ckc", "/etc/passwd", "a/b.ckc", ".", "..", "", "x.ckc.tmp", ".ckc",
           std::string("a\0b.ckc", 7), std::string(300, 'a') + ".ckc"}) {
    ChunkRef r{name, {100, 1}, kKey, 0, 0};
    std::vector<uint8_t> enc = encode_chunk_ref(r);
    ChunkRef back;
    std::string err;
    EXPECT_FALSE(decode_chunk_ref(enc.data(), enc.size(), back, &err)) << name;
    EXPECT_NE(err.find("bad reference"), std::string::npos) << err;
  }
  // The writer refuses to store one.
  TempDir d;
  ContainerWriter w;
  std::string err;
  ASSERT_TRUE(w.open(d / "w.ckc", &err)) << err;
  uint32_t s = w.add_stream(kKey, "F64LE", "aware");
  EXPECT_FALSE(w.append_chunk(s, make_ref_chunk({"../x.ckc", {100, 1}, kKey, 0, 0}, 10, 1), &err));
  EXPECT_NE(err.find("../x.ckc"), std::string::npos) << err;
}

TEST(ChunkRef, ReaderResolvesReferenceNextToTheContainer) {
  TempDir d;
  auto a = bytes_of(5000, 1), b = bytes_of(3000, 2), b2 = bytes_of(3000, 3);
  ContainerIdentity id = write_original(d / "c-old.ckc", a, b);
  write_referrer(d / "c-new.ckc", "c-old.ckc", id, 0, a, b2);
  EXPECT_EQ(version_of(d / "c-old.ckc"), 6u);
  EXPECT_EQ(version_of(d / "c-new.ckc"), 6u);
  ContainerReader r;
  std::string err;
  ASSERT_TRUE(r.open(d / "c-new.ckc", &err)) << err;
  EXPECT_EQ(r.ref_chunks(), 1u);
  EXPECT_EQ(r.chunk_chain(0, 0), "ref");
  std::set<std::string> refs;
  ASSERT_TRUE(r.referenced_containers(refs, &err)) << err;
  EXPECT_EQ(refs, std::set<std::string>{"c-old.ckc"});
  std::vector<uint8_t> got, want(a);
  want.insert(want.end(), b2.begin(), b2.end());
  ASSERT_TRUE(r.read_file(0, got, &err)) << err;
  EXPECT_EQ(got, want);
  std::vector<std::string> problems;
  EXPECT_TRUE(r.verify(problems)) << problems[0];
  // The referenced chunk's own size and hash are the reference's.
  EXPECT_EQ(r.streams()[0].chunks[0].raw_size, 5000u);
}

// Reads the referring container anew after `damage` and expects an error naming it, the
// referenced container and `what`.
void expect_broken(const TempDir& d, const std::string& what) {
  ContainerReader r;
  std::string err;
  ASSERT_TRUE(r.open(d / "c-new.ckc", &err)) << err;
  std::vector<uint8_t> got;
  EXPECT_FALSE(r.read_file(0, got, &err));
  EXPECT_NE(err.find("c-new.ckc"), std::string::npos) << err;
  EXPECT_NE(err.find(std::string("chunk 0 of stream '") + kKey + "' refers to chunk 0 of stream '" +
                     kKey + "' in c-old.ckc, which " + what),
            std::string::npos)
      << err;
  std::vector<std::string> problems;
  EXPECT_FALSE(r.verify(problems));
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("c-old.ckc, which " + what), std::string::npos) << problems[0];
}

TEST(ChunkRef, MissingReplacedOrCorruptReferencedContainerIsNamed) {
  TempDir d;
  auto a = bytes_of(5000, 1), b = bytes_of(3000, 2);
  ContainerIdentity id = write_original(d / "c-old.ckc", a, b);
  write_referrer(d / "c-new.ckc", "c-old.ckc", id, 0, a, b);
  auto original = test::read_all(d / "c-old.ckc");

  ASSERT_EQ(::unlink((d / "c-old.ckc").c_str()), 0);
  expect_broken(d, "is missing");

  // Another container under the name (its index differs).
  write_original(d / "c-old.ckc", a, bytes_of(3000, 9));
  expect_broken(d, "was replaced");

  // The right container with a flipped byte in the referenced chunk.
  auto bad = original;
  bad[20] ^= 0x40;
  test::write_all(d / "c-old.ckc", bad);
  expect_broken(d, "is corrupt");
}

TEST(ChunkRef, ReferenceToAReferenceIsRefused) {
  TempDir d;
  auto a = bytes_of(5000, 1), b = bytes_of(3000, 2);
  ContainerIdentity id = write_original(d / "c-orig.ckc", a, b);
  write_referrer(d / "c-old.ckc", "c-orig.ckc", id, 0, a, b);
  ContainerReader mid;
  std::string err;
  ASSERT_TRUE(mid.open(d / "c-old.ckc", &err)) << err;
  write_referrer(d / "c-new.ckc", "c-old.ckc", mid.identity(), 0, a, b);
  expect_broken(d, "is corrupt (that chunk is itself a reference)");
}

TEST(ChunkRef, LoneContainerNamesTheMissingContainer) {
  TempDir d, elsewhere;
  auto a = bytes_of(5000, 1), b = bytes_of(3000, 2);
  ContainerIdentity id = write_original(d / "c-old.ckc", a, b);
  write_referrer(d / "c-new.ckc", "c-old.ckc", id, 0, a, b);
  // Copied away from its store.
  test::write_all(elsewhere / "c-new.ckc", test::read_all(d / "c-new.ckc"));
  ContainerReader r;
  std::string err;
  ASSERT_TRUE(r.open(elsewhere / "c-new.ckc", &err)) << err;
  std::vector<uint8_t> got;
  EXPECT_FALSE(r.read_file(0, got, &err));
  EXPECT_NE(err.find("in c-old.ckc, which is missing"), std::string::npos) << err;
}

}  // namespace
}  // namespace ckptfwd
