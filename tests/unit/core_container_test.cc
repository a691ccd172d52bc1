// Container: write -> read -> restore byte equality (holes, many files, several streams,
// chunk boundaries), corruption found by verify at the right offset, and hostile or
// truncated containers rejected with an error instead of undefined behaviour.
#include <dirent.h>
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>

#include "codec/codec.h"
#include "core_test_util.h"
#include "store/container/container.h"

namespace ckptfwd {
namespace {

using test::build_container;
using test::random_bytes;
using test::smooth_bytes;
using test::TempDir;
using test::TestFile;

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

// Restores file i through restore_file into a fresh file and returns its bytes.
std::vector<uint8_t> restore_via_fd(ContainerReader& r, size_t i, const std::string& out_path,
                                    bool* ok, std::string* err) {
  int fd = ::open(out_path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  *ok = fd >= 0 && r.restore_file(i, fd, err);
  if (fd >= 0) ::close(fd);
  return test::read_all(out_path);
}

std::vector<TestFile> mixed_files() {
  std::vector<TestFile> files;
  files.push_back({"/ckpt/a.bin", smooth_bytes(100000, 1), {}, 0});
  files.push_back({"/ckpt/b.bin", random_bytes(50000, 2), {}, 0});
  files.push_back({"/ckpt/empty.bin", {}, {}, 0});
  // Holes: a file whose middle and tail were never written.
  TestFile holes{"/ckpt/holes.bin", smooth_bytes(70000, 3), {{0, 1000}, {30000, 5000}}, 1};
  std::fill(holes.content.begin() + 1000, holes.content.begin() + 30000, 0);
  std::fill(holes.content.begin() + 35000, holes.content.end(), 0);
  files.push_back(holes);
  // Only a hole: ftruncate to a size without any write.
  files.push_back({"/ckpt/sparse.bin", std::vector<uint8_t>(12345, 0), {}, 1});
  files.back().extents = {{12000, 0}};  // a zero-length range is legal and harmless
  files.push_back({"/ckpt/sub/dir/c.bin", smooth_bytes(9000, 4), {}, 1});
  return files;
}

TEST(Container, WriteReadRestoreIsByteIdentical) {
  TempDir dir;
  for (const char* codec : {"zstd", "zlib", "raw"}) {
    std::vector<TestFile> files = mixed_files();
    std::string path = dir / (std::string("c-") + codec + ".ckc");
    std::string err;
    ASSERT_TRUE(build_container(path, files, 2, 4096, codec, &err)) << err;
    ContainerReader r;
    ASSERT_TRUE(r.open(path, &err)) << err;
    ASSERT_EQ(r.files().size(), files.size());
    ASSERT_EQ(r.streams().size(), 2u);
    EXPECT_EQ(r.streams()[0].key, "stream0");
    EXPECT_EQ(r.streams()[1].scheme, "agnostic");
    for (size_t i = 0; i < files.size(); ++i) {
      const FileEntry& f = r.files()[i];
      EXPECT_EQ(f.path, files[i].path);
      EXPECT_EQ(f.size, files[i].content.size());
      EXPECT_EQ(f.mode, 0640u);
      EXPECT_EQ(f.mtime_ns, 1700000000123456789LL);
      EXPECT_EQ(f.rank, 0);
      std::vector<uint8_t> mem;
      ASSERT_TRUE(r.read_file(i, mem, &err)) << f.path << ": " << err;
      EXPECT_EQ(mem, files[i].content) << codec << " " << f.path;
      bool ok = false;
      std::vector<uint8_t> disk = restore_via_fd(r, i, dir / "out", &ok, &err);
      ASSERT_TRUE(ok) << err;
      EXPECT_EQ(disk, files[i].content) << codec << " " << f.path;
    }
    std::vector<std::string> problems;
    EXPECT_TRUE(r.verify(problems));
    EXPECT_TRUE(problems.empty()) << problems[0];
  }
}

TEST(Container, RestoreOverwritesAnExistingLongerFile) {
  TempDir dir;
  std::vector<TestFile> files = {{"/x", smooth_bytes(1000, 1), {}, 0}};
  std::string err;
  ASSERT_TRUE(build_container(dir / "c.ckc", files, 1, 4096, "zstd", &err)) << err;
  test::write_all(dir / "out", random_bytes(5000, 9));
  ContainerReader r;
  ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
  int fd = ::open((dir / "out").c_str(), O_RDWR);
  ASSERT_TRUE(r.restore_file(0, fd, &err)) << err;
  ::close(fd);
  EXPECT_EQ(test::read_all(dir / "out"), files[0].content);
}

TEST(Container, ManyFilesAndRangesCrossingChunkBoundaries) {
  TempDir dir;
  std::vector<TestFile> files;
  for (int i = 0; i < 300; ++i) {
    TestFile f{"/ckpt/rank" + std::to_string(i) + ".dat",
               i % 3 ? smooth_bytes(1000 + 37 * i, i) : random_bytes(777 + i, i),
               {},
               0};
    // Several extents per file, each crossing the 1000-byte chunk grid somewhere.
    if (f.content.size() > 900) {
      f.extents = {{0, 300}, {300, 500}, {800, f.content.size() - 800}};
    }
    files.push_back(f);
  }
  std::string err;
  ASSERT_TRUE(build_container(dir / "many.ckc", files, 1, 1000, "zstd", &err)) << err;
  ContainerReader r;
  ASSERT_TRUE(r.open(dir / "many.ckc", &err)) << err;
  ASSERT_EQ(r.files().size(), 300u);
  EXPECT_GT(r.streams()[0].chunks.size(), 100u);
  for (size_t i = 0; i < files.size(); ++i) {
    std::vector<uint8_t> mem;
    ASSERT_TRUE(r.read_file(i, mem, &err)) << err;
    ASSERT_EQ(mem, files[i].content) << files[i].path;
  }
  std::vector<std::string> problems;
  EXPECT_TRUE(r.verify(problems));
}

TEST(Container, NothingAtFinalPathBeforeCommitAndNoTemporaryAfter) {
  TempDir dir;
  std::string final_path = dir / "c.ckc";
  std::string err;
  {
    ContainerWriter w;
    ASSERT_TRUE(w.open(final_path, &err)) << err;
    uint32_t s = w.add_stream("agnostic", "bytes", "agnostic");
    std::vector<uint8_t> data = smooth_bytes(10000, 1);
    ASSERT_TRUE(w.append_chunk(s, encode_chunk(data.data(), data.size(), "zstd", 3), &err));
    EXPECT_EQ(::access(final_path.c_str(), F_OK), -1);
    EXPECT_EQ(list_dir(dir.path()).size(), 1u);  // the temporary
    EXPECT_GT(w.bytes_written(), 16u);
    // Destroyed without commit: the temporary goes away.
  }
  EXPECT_TRUE(list_dir(dir.path()).empty());
  {
    ContainerWriter w;
    ASSERT_TRUE(w.open(final_path, &err)) << err;
    w.abort();
    EXPECT_TRUE(list_dir(dir.path()).empty());
  }
  std::vector<TestFile> files = {{"/x", smooth_bytes(100, 1), {}, 0}};
  ASSERT_TRUE(build_container(final_path, files, 1, 4096, "zstd", &err)) << err;
  EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{"c.ckc"});
  struct stat st;
  ASSERT_EQ(::stat(final_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

// More decoded chunks than the reader keeps (64 MiB): two files over the same 80 MiB.
// Reading the first evicts its first chunks, whose buffers the last ones are decoded
// into; the second then decodes its first chunks again into evicted buffers. Every byte
// still comes back right.
TEST(Container, ReadsPastTheChunkCacheComeBackExact) {
  TempDir dir;
  std::string err, path = dir / "c.ckc";
  const size_t chunk = 4u << 20, n = 20;
  std::vector<uint8_t> data(chunk * n);
  for (size_t i = 0; i < data.size(); i += 8) {
    uint64_t v = i * 0x9e3779b97f4a7c15ull;
    memcpy(&data[i], &v, 8);
  }
  {
    ContainerWriter w;
    ASSERT_TRUE(w.open(path, &err)) << err;
    uint32_t s = w.add_stream("s", "bytes", "agnostic");
    for (size_t k = 0; k < n; ++k)
      ASSERT_TRUE(w.append_chunk(s, encode_chunk(data.data() + k * chunk, chunk, "raw", 0), &err));
    for (const char* name : {"/first", "/second"}) {
      FileEntry f;
      f.path = name;
      f.size = data.size();
      f.hash = content_hash(data.data(), data.size());
      f.ranges = {{0, data.size(), s, 0}};
      w.add_file(f);
    }
    ASSERT_TRUE(w.commit(&err)) << err;
  }
  ContainerReader r;
  ASSERT_TRUE(r.open(path, &err)) << err;
  for (size_t i = 0; i < 2; ++i) {
    std::vector<uint8_t> got;
    ASSERT_TRUE(r.read_file(i, got, &err)) << err;
    EXPECT_TRUE(got == data) << "file " << i;
  }
}

TEST(Container, WriterRejectsABadFileMap) {
  TempDir dir;
  std::string err;
  std::vector<uint8_t> data = smooth_bytes(1000, 1);
  auto attempt = [&](std::vector<FileRange> ranges, uint64_t size) {
    ContainerWriter w;
    EXPECT_TRUE(w.open(dir / "c.ckc", &err));
    uint32_t s = w.add_stream("s", "bytes", "agnostic");
    EXPECT_TRUE(w.append_chunk(s, encode_chunk(data.data(), data.size(), "zstd", 3), &err));
    FileEntry f;
    f.path = "/f";
    f.size = size;
    f.ranges = std::move(ranges);
    w.add_file(f);
    err.clear();
    bool ok = w.commit(&err);
    return ok;
  };
  EXPECT_FALSE(attempt({{0, 600, 0, 0}, {500, 100, 0, 0}}, 1000));  // overlap
  EXPECT_NE(err.find("overlaps"), std::string::npos) << err;
  EXPECT_FALSE(attempt({{0, 100, 1, 0}}, 1000));    // unknown stream
  EXPECT_FALSE(attempt({{0, 100, 0, 950}}, 1000));  // beyond the stream
  EXPECT_FALSE(attempt({{950, 100, 0, 0}}, 1000));  // beyond the file
  EXPECT_TRUE(list_dir(dir.path()).empty()) << "a failed commit leaves nothing behind";
  // Ranges given out of order are sorted, not rejected.
  EXPECT_TRUE(attempt({{500, 100, 0, 0}, {0, 100, 0, 0}}, 1000)) << err;
}

TEST(Container, AppendChunkRejectsUnknownStreamAndCodec) {
  TempDir dir;
  std::string err;
  ContainerWriter w;
  ASSERT_TRUE(w.open(dir / "c.ckc", &err));
  std::vector<uint8_t> data = smooth_bytes(100, 1);
  EncodedChunk c = encode_chunk(data.data(), data.size(), "zstd", 3);
  EXPECT_FALSE(w.append_chunk(0, c, &err));  // no stream yet
  w.add_stream("s", "bytes", "agnostic");
  c.codec = 77;
  EXPECT_FALSE(w.append_chunk(0, c, &err));
  EXPECT_NE(err.find("codec"), std::string::npos);
}

// ---- corruption ----

struct Corrupted {
  TempDir dir;
  std::string path;
  std::vector<TestFile> files;
};

TEST(ContainerCorruption, OneFlippedChunkByteIsFoundAtItsOffsetAndOnlyItsFileFails) {
  Corrupted c;
  c.path = c.dir / "c.ckc";
  c.files = {{"/ckpt/first.bin", smooth_bytes(20000, 1), {}, 0},
             {"/ckpt/second.bin", smooth_bytes(20000, 2), {}, 0},
             {"/ckpt/third.bin", random_bytes(3000, 3), {}, 1}};
  std::string err;
  // 4 KiB chunks: first.bin occupies chunks 0..4 of stream 0, second.bin chunks 4..9.
  ASSERT_TRUE(build_container(c.path, c.files, 2, 4096, "zstd", &err)) << err;
  ContainerReader probe;
  ASSERT_TRUE(probe.open(c.path, &err)) << err;
  const ChunkInfo victim = probe.streams()[0].chunks[7];  // inside second.bin only
  std::vector<uint8_t> bytes = test::read_all(c.path);
  bytes[victim.offset + victim.comp_size / 2] ^= 0x01;
  test::write_all(c.path, bytes);

  ContainerReader r;
  ASSERT_TRUE(r.open(c.path, &err)) << "chunk damage must not hide the index: " << err;
  std::vector<std::string> problems;
  EXPECT_FALSE(r.verify(problems));
  ASSERT_EQ(problems.size(), 1u);
  std::string want =
      c.path + ": offset " + std::to_string(victim.offset) + ": chunk 7 of stream 'stream0': ";
  EXPECT_EQ(problems[0].rfind(want, 0), 0u) << problems[0];

  bool ok = true;
  restore_via_fd(r, 1, c.dir / "out1", &ok, &err);
  EXPECT_FALSE(ok);
  EXPECT_NE(err.find("offset " + std::to_string(victim.offset)), std::string::npos) << err;
  EXPECT_NE(err.find("second.bin"), std::string::npos) << err;
  std::vector<uint8_t> mem;
  EXPECT_FALSE(r.read_file(1, mem, &err));

  for (size_t i : {size_t{0}, size_t{2}}) {
    std::vector<uint8_t> good = restore_via_fd(r, i, c.dir / "out", &ok, &err);
    ASSERT_TRUE(ok) << err;
    EXPECT_EQ(good, c.files[i].content);
  }
}

TEST(ContainerCorruption, RawChunkCorruptionIsCaughtByTheHashes) {
  TempDir dir;
  std::vector<TestFile> files = {{"/r", random_bytes(10000, 1), {}, 0}};
  std::string err;
  ASSERT_TRUE(build_container(dir / "c.ckc", files, 1, 4096, "zstd", &err)) << err;
  std::vector<uint8_t> bytes = test::read_all(dir / "c.ckc");
  bytes[16 + 5000] ^= 0x80;  // chunk 1 (raw: random data does not compress)
  test::write_all(dir / "c.ckc", bytes);
  ContainerReader r;
  ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
  std::vector<std::string> problems;
  EXPECT_FALSE(r.verify(problems));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("offset 4112: chunk 1 of stream"), std::string::npos) << problems[0];
}

// A chunk whose stored bytes match their checksum but decode to other bytes than the
// chunk's raw checksum (a writer bug, or damage written with a fresh stored checksum):
// the restore walks do not hash each decoded chunk, the file hash does; the restore of
// the file holding it fails and names that chunk, with one or several decode threads,
// and the other file restores exactly.
TEST(ContainerCorruption, AChunkDecodingToOtherBytesIsNamedByTheRestoreOfItsFile) {
  for (unsigned threads : {1u, 3u}) {
    TempDir dir;
    const std::vector<uint8_t> a = smooth_bytes(3 * 4096, 1), b = smooth_bytes(2 * 4096, 2);
    std::string err;
    ContainerWriter w;
    ASSERT_TRUE(w.open(dir / "c.ckc", &err)) << err;
    const uint32_t s = w.add_stream("s", "bytes", "agnostic");
    std::vector<uint8_t> both = a;
    both.insert(both.end(), b.begin(), b.end());
    for (size_t off = 0; off < both.size(); off += 4096) {
      EncodedChunk c = encode_chunk(both.data() + off, 4096, "raw", 0);
      if (off == 4096) {  // chunk 1, inside a: stored bytes changed, stored hash kept true
        c.bytes[100] ^= 0x5A;
        c.comp_hash = content_hash(c.bytes.data(), c.bytes.size());
      }
      ASSERT_TRUE(w.append_chunk(s, c, &err)) << err;
    }
    FileEntry fa, fb;
    fa.path = "/a", fa.size = a.size(), fa.hash = content_hash(a.data(), a.size());
    fa.ranges = {{0, a.size(), s, 0}};
    fb.path = "/b", fb.size = b.size(), fb.hash = content_hash(b.data(), b.size());
    fb.ranges = {{0, b.size(), s, a.size()}};
    w.add_file(fa);
    w.add_file(fb);
    ASSERT_TRUE(w.commit(&err)) << err;

    ContainerReader r;
    r.set_decode_threads(threads);
    ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
    bool ok = true;
    restore_via_fd(r, 0, dir / "out", &ok, &err);
    EXPECT_FALSE(ok) << threads << " threads";
    EXPECT_NE(err.find("chunk 1 of stream 's'"), std::string::npos) << err;
    EXPECT_NE(err.find("do not match their checksum (needed by file '/a')"), std::string::npos)
        << err;
    std::vector<uint8_t> got = restore_via_fd(r, 1, dir / "out", &ok, &err);
    ASSERT_TRUE(ok) << err;
    EXPECT_EQ(got, b);
  }
}

TEST(ContainerCorruption, EveryTruncationIsRejectedCleanly) {
  TempDir dir;
  std::vector<TestFile> files = mixed_files();
  std::string err;
  ASSERT_TRUE(build_container(dir / "c.ckc", files, 2, 4096, "zstd", &err)) << err;
  std::vector<uint8_t> bytes = test::read_all(dir / "c.ckc");
  // Every length in the header and trailer zone, a sample in between (keeps the test fast).
  for (size_t len = 0; len < bytes.size(); len += (len < 48 || len > bytes.size() - 48) ? 1 : 499) {
    test::write_all(dir / "t.ckc", std::vector<uint8_t>(bytes.begin(), bytes.begin() + len));
    ContainerReader r;
    err.clear();
    EXPECT_FALSE(r.open(dir / "t.ckc", &err)) << "length " << len;
    EXPECT_FALSE(err.empty());
    EXPECT_TRUE(r.files().empty());
  }
}

TEST(ContainerCorruption, EveryIndexOrTrailerByteFlipIsRejected) {
  TempDir dir;
  std::vector<TestFile> files = mixed_files();
  std::string err;
  ASSERT_TRUE(build_container(dir / "c.ckc", files, 2, 4096, "zlib", &err)) << err;
  std::vector<uint8_t> bytes = test::read_all(dir / "c.ckc");
  ContainerReader probe;
  ASSERT_TRUE(probe.open(dir / "c.ckc", &err));
  uint64_t index_off = 0;
  for (int i = 0; i < 8; ++i) index_off |= uint64_t(bytes[bytes.size() - 32 + i]) << (8 * i);
  // Every trailer byte; index bytes at a stride (any index flip breaks the same checksum).
  for (size_t at = index_off; at < bytes.size(); at += at >= bytes.size() - 32 ? 1 : 7) {
    std::vector<uint8_t> bad = bytes;
    bad[at] ^= 0x04;
    test::write_all(dir / "t.ckc", bad);
    ContainerReader r;
    EXPECT_FALSE(r.open(dir / "t.ckc", &err)) << "flip at " << at;
  }
  // Header damage: magic and version.
  for (size_t at : {size_t{0}, size_t{7}, size_t{8}}) {
    std::vector<uint8_t> bad = bytes;
    bad[at] ^= 0x04;
    test::write_all(dir / "t.ckc", bad);
    ContainerReader r;
    EXPECT_FALSE(r.open(dir / "t.ckc", &err));
  }
}

TEST(ContainerCorruption, GarbageAndNonFilesAreRejected) {
  TempDir dir;
  std::string err;
  ContainerReader r;
  EXPECT_FALSE(r.open(dir / "missing.ckc", &err));
  EXPECT_NE(err.find("missing.ckc"), std::string::npos);
  EXPECT_FALSE(r.open(dir.path(), &err));
  for (uint32_t seed = 0; seed < 50; ++seed) {
    std::vector<uint8_t> g = random_bytes(seed * 13, seed);
    if (g.size() >= 8) std::copy_n("CKFWDC01", 8, g.begin());
    test::write_all(dir / "g.ckc", g);
    EXPECT_FALSE(r.open(dir / "g.ckc", &err));
  }
}

// A hostile index with a valid checksum: every bound is checked, not just the hash.
class HostileIndex : public ::testing::Test {
 protected:
  struct Enc {
    std::vector<uint8_t> b;
    void u8(uint8_t v) { b.push_back(v); }
    void u32(uint32_t v) {
      for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
    }
    void u64(uint64_t v) {
      for (int i = 0; i < 8; ++i) b.push_back(uint8_t(v >> (8 * i)));
    }
    void str(const std::string& s) {
      u32(uint32_t(s.size()));
      b.insert(b.end(), s.begin(), s.end());
    }
  };
  // One stream with one raw chunk "hello world!" at offset 16, one file using it.
  struct Params {
    uint32_t n_streams = 1, n_chunks = 1, n_files = 1, n_ranges = 1;
    uint32_t chunk_raw = 12, chunk_comp = 12;
    uint64_t chunk_off = 16, stream_raw = 12;
    uint64_t file_size = 12, r_off = 0, r_len = 12, r_soff = 0;
    uint32_t r_stream = 0;
    uint8_t codec = 0;
  };
  std::string build(const Params& p) {
    const std::string payload = "hello world!";
    Enc x;
    x.u32(p.n_streams);
    x.str("s");
    x.str("bytes");
    x.str("agnostic");
    x.u64(p.stream_raw);
    x.u32(p.n_chunks);
    x.u8(p.codec);
    x.u32(p.chunk_raw);
    x.u32(p.chunk_comp);
    x.u64(p.chunk_off);
    x.u64(XXH64(payload.data(), payload.size(), 0));
    x.u64(XXH64(payload.data(), payload.size(), 0));
    x.u32(p.n_files);
    x.str("/f");
    x.u32(0);
    x.u64(p.file_size);
    x.u32(0644);
    x.u64(0);
    x.u64(1);
    x.u64(XXH64(payload.data(), payload.size(), 0));
    x.u32(p.n_ranges);
    x.u64(p.r_off);
    x.u64(p.r_len);
    x.u32(p.r_stream);
    x.u64(p.r_soff);
    Enc f;
    f.b.assign({'C', 'K', 'F', 'W', 'D', 'C', '0', '1'});
    f.u32(1);
    f.u32(0);
    f.b.insert(f.b.end(), payload.begin(), payload.end());
    uint64_t index_off = f.b.size();
    f.b.insert(f.b.end(), x.b.begin(), x.b.end());
    f.u64(index_off);
    f.u64(x.b.size());
    f.u64(XXH64(x.b.data(), x.b.size(), 0));
    f.b.insert(f.b.end(), {'C', 'K', 'F', 'W', 'D', 'E', 'N', 'D'});
    std::string path = dir_ / ("h" + std::to_string(n_++) + ".ckc");
    test::write_all(path, f.b);
    return path;
  }
  bool opens(const Params& p, std::string* err) {
    ContainerReader r;
    return r.open(build(p), err);
  }
  TempDir dir_;
  int n_ = 0;
};

TEST_F(HostileIndex, TheWellFormedBaselineOpensAndRestores) {
  std::string err;
  ContainerReader r;
  ASSERT_TRUE(r.open(build(Params{}), &err)) << err;
  std::vector<uint8_t> out;
  ASSERT_TRUE(r.read_file(0, out, &err)) << err;
  EXPECT_EQ(std::string(out.begin(), out.end()), "hello world!");
}

TEST_F(HostileIndex, OutOfBoundsValuesAreRejected) {
  std::string err;
  auto bad = [&](auto mutate, const char* what) {
    Params p;
    mutate(p);
    err.clear();
    EXPECT_FALSE(opens(p, &err)) << what;
    EXPECT_FALSE(err.empty()) << what;
  };
  bad([](Params& p) { p.n_streams = 0xFFFFFFFF; }, "huge stream count");
  bad([](Params& p) { p.n_chunks = 0x10000000; }, "huge chunk count");
  bad([](Params& p) { p.n_files = 5000; }, "file count beyond the index");
  bad([](Params& p) { p.n_ranges = 0xFFFFFFFF; }, "huge range count");
  bad([](Params& p) { p.chunk_off = 8; }, "chunk inside the header");
  bad([](Params& p) { p.chunk_off = 20; }, "chunk running into the index");
  bad([](Params& p) { p.chunk_off = ~0ull - 4; }, "chunk offset overflow");
  bad([](Params& p) { p.chunk_comp = 0xFFFFFFFF; }, "chunk size beyond the file");
  bad(
      [](Params& p) {
        p.chunk_raw = 0xFFFFFFF0;
        p.stream_raw = 0xFFFFFFF0;
      },
      "giant raw chunk");
  bad([](Params& p) { p.stream_raw = 13; }, "stream size disagrees with chunks");
  bad([](Params& p) { p.r_stream = 1; }, "range names a missing stream");
  bad([](Params& p) { p.r_soff = 1; }, "range beyond its stream");
  bad([](Params& p) { p.r_soff = ~0ull; }, "range stream offset overflow");
  bad([](Params& p) { p.r_off = 1; }, "range beyond the file size");
  bad(
      [](Params& p) {
        p.r_len = ~0ull;
        p.file_size = ~0ull;
      },
      "range length overflow");
}

TEST_F(HostileIndex, BadCodecOrSizesFailAtRestoreNotBefore) {
  std::string err;
  Params p;
  p.codec = 9;  // unknown codec: the index is fine, the chunk cannot be decoded
  ContainerReader r;
  ASSERT_TRUE(r.open(build(p), &err)) << err;
  std::vector<uint8_t> out;
  EXPECT_FALSE(r.read_file(0, out, &err));
  EXPECT_NE(err.find("codec"), std::string::npos) << err;
  std::vector<std::string> problems;
  EXPECT_FALSE(r.verify(problems));

  Params q;
  q.codec = 1;  // "zstd" over bytes that are not a zstd frame
  ContainerReader r2;
  ASSERT_TRUE(r2.open(build(q), &err)) << err;
  EXPECT_FALSE(r2.read_file(0, out, &err));
  EXPECT_FALSE(r2.restore_file(5, -1, &err));  // no such file
}

}  // namespace
}  // namespace ckptfwd
