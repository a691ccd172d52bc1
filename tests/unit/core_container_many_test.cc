// ContainerReader::restore_files and read_files, and materialize_entries on them: the files
// of a batch merged by variable across ranks, restored together with each chunk decoded
// once, exact, and a file that fails restored again alone for its own error.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "codec/codec.h"
#include "core_test_util.h"
#include "store/container/chunk_encode.h"
#include "store/container/container.h"
#include "store/container/content_hash.h"
#include "store/manifest/materialize.h"

namespace ckptfwd {
namespace {

using test::smooth_bytes;
using test::TempDir;

// ranks files of vars variables of `piece` bytes each, variable v of rank k stored in
// stream v at stream offset k * piece (a merge across ranks), chunks of chunk bytes. In the
// file, variable v lies at offset v * piece; with reversed, the odd ranks hold them the
// other way round (at (vars - 1 - v) * piece), so those files' pieces cannot all come in
// their order. File 1's variable 0 is a hole when holes;
// file wrong_hash (if any) is recorded with a hash its content does not have.
struct Merged {
  std::vector<std::vector<uint8_t>> contents;
  size_t chunks = 0;
};
Merged write_merged(const std::string& path, size_t ranks, size_t vars, size_t piece, size_t chunk,
                    bool reversed, bool holes, const std::string& codec,
                    size_t wrong_hash = SIZE_MAX) {
  Merged m;
  std::vector<std::vector<uint8_t>> streams(vars);
  std::vector<FileEntry> entries;
  for (size_t k = 0; k < ranks; ++k) {
    std::vector<uint8_t> c = smooth_bytes(vars * piece, static_cast<uint32_t>(k + 1));
    FileEntry e;
    e.path = "/ckpt/rank" + std::to_string(k) + ".bin";
    e.size = c.size();
    e.mode = 0640;
    e.version = k + 1;
    const bool flip = reversed && k % 2 == 1;
    for (size_t j = 0; j < vars; ++j) {  // in file order: ranges sorted by offset
      const size_t v = flip ? vars - 1 - j : j, off = j * piece;
      if (holes && k == 1 && v == 0) {
        std::fill(c.begin() + static_cast<long>(off), c.begin() + static_cast<long>(off + piece),
                  0);
        continue;
      }
      const uint32_t s = static_cast<uint32_t>(v);
      e.ranges.push_back({off, piece, s, streams[s].size()});
      streams[s].insert(streams[s].end(), c.begin() + static_cast<long>(off),
                        c.begin() + static_cast<long>(off + piece));
    }
    e.hash = content_hash(c.data(), c.size()) + (k == wrong_hash ? 1 : 0);
    entries.push_back(e);
    m.contents.push_back(std::move(c));
  }
  ContainerWriter w;
  std::string err;
  EXPECT_TRUE(w.open(path, &err)) << err;
  for (size_t s = 0; s < vars; ++s) {
    w.add_stream("var" + std::to_string(s), "bytes", "merged");
    for (size_t at = 0; at < streams[s].size(); at += chunk) {
      const size_t n = std::min(chunk, streams[s].size() - at);
      EXPECT_TRUE(w.append_chunk(static_cast<uint32_t>(s),
                                 encode_chunk(streams[s].data() + at, n, codec, 3), &err))
          << err;
      m.chunks++;
    }
  }
  for (FileEntry& e : entries) w.add_file(e);
  EXPECT_TRUE(w.commit(&err)) << err;
  return m;
}

std::vector<size_t> all_of(size_t n) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::vector<uint8_t> b;
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return b;
  struct stat st {};
  fstat(fd, &st);
  b.resize(static_cast<size_t>(st.st_size));
  if (pread(fd, b.data(), b.size(), 0) != static_cast<ssize_t>(b.size())) b.clear();
  close(fd);
  return b;
}

TEST(ContainerMany, EveryChunkIsDecodedOnceForAllTheFiles) {
  for (bool reversed : {false, true}) {
    TempDir dir;
    // 8 ranks x 5 variables of 3000 bytes; chunks of 4096 bytes hold pieces of 2-3 ranks.
    Merged m = write_merged(dir / "c.ckc", 8, 5, 3000, 4096, reversed, true, "zstd");
    ContainerReader r;
    std::string err;
    ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
    std::vector<std::vector<uint8_t>> outs(8, std::vector<uint8_t>(15000, 0xAA));
    std::vector<std::string> errs;
    ASSERT_TRUE(r.read_files(all_of(8), outs, errs)) << (reversed ? "reversed" : "in order");
    for (size_t k = 0; k < 8; ++k) {
      EXPECT_EQ(outs[k], m.contents[k]) << k;
      EXPECT_EQ(errs[k], "") << k;
    }
    EXPECT_EQ(r.chunks_decoded(), m.chunks);
  }
}

TEST(ContainerMany, FilesRestoreIntoTheirDescriptors) {
  for (bool reversed : {false, true}) {
    TempDir dir;
    Merged m = write_merged(dir / "c.ckc", 6, 4, 5000, 8192, reversed, true, "zstd");
    ContainerReader r;
    std::string err;
    ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
    // In another order than the container's, and not all of them.
    const std::vector<size_t> fis = {4, 1, 0, 5};
    std::vector<int> fds;
    for (size_t k = 0; k < fis.size(); ++k)
      fds.push_back(
          ::open((dir / ("out" + std::to_string(k))).c_str(), O_RDWR | O_CREAT | O_EXCL, 0600));
    std::vector<std::string> errs;
    EXPECT_TRUE(r.restore_files(fis, fds, errs));
    for (size_t k = 0; k < fis.size(); ++k) {
      close(fds[k]);
      EXPECT_EQ(file_bytes(dir / ("out" + std::to_string(k))), m.contents[fis[k]]) << k;
    }
  }
}

// A file that fails, by a corrupt chunk or by its hash, comes back with the error it gets
// alone; the others come back exact.
void expect_own_errors(ContainerReader& r, const Merged& m, bool reversed) {
  std::vector<std::vector<uint8_t>> outs;
  std::vector<std::string> errs;
  EXPECT_FALSE(r.read_files({0, 1, 2, 3, 7}, outs, errs));
  for (size_t k : {0u, 1u, 3u}) {
    EXPECT_EQ(errs[k], "") << k;
    EXPECT_EQ(outs[k], m.contents[k]) << k;
  }
  std::vector<uint8_t> alone;
  std::string alone_err;
  EXPECT_FALSE(r.read_file(2, alone, &alone_err));
  EXPECT_EQ(errs[2], alone_err) << (reversed ? "reversed" : "in order");
  EXPECT_NE(errs[2].find("rank2.bin"), std::string::npos) << errs[2];
  EXPECT_NE(errs[4].find("no file 7"), std::string::npos) << errs[4];
}

TEST(ContainerMany, AFileThatFailsGetsItsOwnErrorAndTheOthersComeBack) {
  // A corrupt chunk: chunk 2 of stream 1, which holds rank 2's piece of variable 1 alone.
  {
    TempDir dir;
    Merged m = write_merged(dir / "c.ckc", 4, 3, 4096, 4096, false, false, "raw");
    ContainerReader probe;
    std::string err;
    ASSERT_TRUE(probe.open(dir / "c.ckc", &err)) << err;
    const uint64_t at = probe.streams()[1].chunks[2].offset + 100;
    int fd = ::open((dir / "c.ckc").c_str(), O_RDWR);
    uint8_t b = 0;
    ASSERT_EQ(pread(fd, &b, 1, static_cast<off_t>(at)), 1);
    b ^= 0xFF;
    ASSERT_EQ(pwrite(fd, &b, 1, static_cast<off_t>(at)), 1);
    close(fd);
    ContainerReader r;
    ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
    expect_own_errors(r, m, false);
  }
  // Rank 2's content does not match its hash: checked on the pieces as they pass (in
  // order), and with reversed also on files read back (ranks 1 and 3).
  for (bool reversed : {false, true}) {
    TempDir dir;
    Merged m = write_merged(dir / "c.ckc", 4, 3, 3000, 4096, reversed, false, "zstd", 2);
    ContainerReader r;
    std::string err;
    ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
    expect_own_errors(r, m, reversed);
    std::vector<std::string> errs;
    int fd = ::open((dir / "out").c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    EXPECT_FALSE(r.restore_files({2}, {fd}, errs));
    close(fd);
    EXPECT_NE(errs[0].find("does not match its checksum"), std::string::npos) << errs[0];
  }
}

TEST(ChunkGroups, FilesOfAVariableMergedAcrossRanksShareAGroup) {
  TempDir dir;
  // Stream 0 in chunks of 4096: files a and b fill chunk 0 (3000 and 1096 bytes);
  // c lies in chunk 1 alone; d is in its own stream; e is empty.
  std::vector<test::TestFile> files = {{"/a", smooth_bytes(3000, 1), {}, 0},
                                       {"/b", smooth_bytes(1096, 2), {}, 0},
                                       {"/c", smooth_bytes(2000, 3), {}, 0},
                                       {"/d", smooth_bytes(5000, 4), {}, 1},
                                       {"/e", {}, {}, 0}};
  std::string err;
  ASSERT_TRUE(test::build_container(dir / "c.ckc", files, 2, 4096, "zstd", &err)) << err;
  ContainerReader r;
  ASSERT_TRUE(r.open(dir / "c.ckc", &err)) << err;
  EXPECT_EQ(r.chunk_groups({0, 1, 2, 3, 4}), (std::vector<size_t>{0, 0, 1, 2, 3}));
  EXPECT_EQ(r.chunk_groups({3, 1}), (std::vector<size_t>{0, 1}));
}

TEST(MaterializeEntries, ACheckpointBeyondTheReadersCacheDecodesEachChunkOnce) {
  TempDir dir;
  // 4 ranks x 40 variables of 512 KiB (80 MiB, past the reader's 64 MiB of decoded
  // chunks); each variable's 2 MiB stream is one chunk holding the 4 ranks' pieces.
  Merged m = write_merged(dir / "c.ckc", 4, 40, 512 << 10, 2 << 20, false, false, "raw");
  ASSERT_EQ(m.chunks, 40u);
  std::vector<CatalogEntry> entries(5);
  for (uint32_t k = 0; k < 5; ++k) {
    entries[k].path = "/ckpt/rank" + std::to_string(k) + ".bin";
    entries[k].container = "c.ckc";
    entries[k].file_index = k;
    entries[k].size = k < 4 ? m.contents[k].size() : 0;
  }
  entries[3].size += 1000;  // the MANIFEST's size wins when larger: a zero tail
  std::vector<std::unique_ptr<ContainerReader>> opened;
  ContainerSource source = [&](const std::string& name, std::string* why) -> ContainerReader* {
    if (opened.empty()) {
      opened.push_back(std::make_unique<ContainerReader>());
      if (!opened.back()->open(dir / name, why)) return nullptr;
    }
    return opened.back().get();
  };
  std::vector<const CatalogEntry*> es;
  std::vector<int> fds;
  for (size_t k = 0; k < entries.size(); ++k) {
    es.push_back(&entries[k]);
    fds.push_back(
        ::open((dir / ("out" + std::to_string(k))).c_str(), O_RDWR | O_CREAT | O_EXCL, 0600));
  }
  std::vector<std::string> errs;
  EXPECT_FALSE(materialize_entries(es, source, fds, errs));
  for (int fd : fds) close(fd);
  for (size_t k = 0; k < 4; ++k) {
    std::vector<uint8_t> want = m.contents[k];
    if (k == 3) want.resize(want.size() + 1000, 0);
    EXPECT_TRUE(file_bytes(dir / ("out" + std::to_string(k))) == want) << k;
    EXPECT_EQ(errs[k], "") << k;
  }
  EXPECT_NE(errs[4].find("the MANIFEST names file 4"), std::string::npos) << errs[4];
  EXPECT_EQ(opened[0]->chunks_decoded(), m.chunks);
  // The same entries one after the other: each file decodes every chunk again (so this
  // test can fail).
  opened.clear();
  for (size_t k = 0; k < 4; ++k) {
    int fd = ::open((dir / ("again" + std::to_string(k))).c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    std::string err;
    EXPECT_TRUE(materialize_entry(entries[k], source, fd, &err, true)) << err;
    close(fd);
  }
  EXPECT_GE(opened[0]->chunks_decoded(), 3 * m.chunks);

  // verify checks every chunk, then every file's map in one walk: twice each chunk (one
  // file after the other, 1 + 4 times).
  ContainerReader v;
  ASSERT_TRUE(v.open(dir / "c.ckc", &errs[0])) << errs[0];
  std::vector<std::string> problems;
  EXPECT_TRUE(v.verify(problems)) << (problems.empty() ? "" : problems[0]);
  EXPECT_EQ(v.chunks_decoded(), 2 * m.chunks);
}

}  // namespace
}  // namespace ckptfwd
