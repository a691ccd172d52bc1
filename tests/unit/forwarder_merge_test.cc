// The merge schemes end to end through write_container: raw checkpoints of several ranks
// described by a schema are laid out by every scheme and group size, and every file reads
// back byte for byte; the streams are the ones the scheme promises (merge_plan.h).

#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "forwarder/pipeline/merge_plan.h"
#include "forwarder/pipeline/pipeline.h"
#include "forwarder_schema_batch.h"
#include "store/container/container.h"

namespace ckptfwd::fwd::test {

namespace {
// One rank's checkpoint: header, a smooth float64 field, a float32 field of decimal
// values, a grid every rank holds identically, then a tail of bytes.
std::string checkpoint(int rank, int n) {
  std::string s = "CKPT0001";
  put<int32_t>(s, n);
  for (int i = 0; i < n; ++i) put<double>(s, std::sin(0.01 * (i + rank * n)) * 300.0 + rank);
  for (int i = 0; i < n; ++i)
    put<float>(s, static_cast<float>(std::round((i % 97 + rank) * 1.5 * 10) / 10));
  for (int i = 0; i < n; ++i) put<double>(s, i * 0.125);  // the same in every rank
  s += payload(333 + rank, rank);
  return s;
}

const char* kSchema =
    "file \"*/rank_*.bin\" little_endian\n"
    "  char magic[8]\n"
    "  int32 n\n"
    "  float64 temperature[n]\n"
    "  float32 pressure[n]\n"
    "  float64 grid[n]\n"
    "  bytes rest[*]\n";
}  // namespace

class MergeSchemes : public SchemaBatchTest {
 protected:
  void SetUp() override {
    SchemaBatchTest::SetUp();
    use_schema(kSchema);
    // Ranks out of order; one file the schema does not describe.
    for (int rank : {3, 0, 5, 1, 4, 2})
      add(data_ + "/rank_" + std::to_string(rank) + ".bin", rank, checkpoint(rank, 3000));
    add(data_ + "/notes.txt", 6, payload(7000, 9));
  }

  void add(const std::string& path, int rank, const std::string& bytes) {
    files_.push_back(
        stage(files_.size() + 1, "staged" + std::to_string(files_.size()), path, rank, bytes));
    contents_.push_back(bytes);
  }

  // Reads every file of res's container back (the container verified first): the file
  // the schema does not describe exact, in the others every byte but the temperature exact
  // and each temperature value within bound of the written one; *changed counts the
  // values that differ.
  void expect_temperature_within(const BatchResult& res, double bound, size_t* changed) {
    ContainerReader r;
    std::string err;
    ASSERT_TRUE(r.open(store() + "/" + res.container, &err)) << err;
    std::vector<std::string> problems;
    EXPECT_TRUE(r.verify(problems)) << (problems.empty() ? "" : problems[0]);
    *changed = 0;
    for (size_t i = 0; i < r.files().size(); ++i) {
      std::vector<uint8_t> got;
      ASSERT_TRUE(r.read_file(i, got, &err)) << err;
      const std::string& in = contents_[i];
      ASSERT_EQ(got.size(), in.size());
      if (r.files()[i].rank == 6) {  // no schema: no variables, nothing lossy
        EXPECT_TRUE(std::string(got.begin(), got.end()) == in);
        continue;
      }
      const int n = 3000;
      const size_t t0 = 12, t1 = t0 + 8 * n;  // temperature: the only lossy bytes
      EXPECT_EQ(memcmp(got.data(), in.data(), t0), 0) << "header of file " << i;
      EXPECT_EQ(memcmp(got.data() + t1, in.data() + t1, in.size() - t1), 0) << "after temperature";
      for (int k = 0; k < n; ++k) {
        double a, b;
        memcpy(&a, in.data() + t0 + 8 * k, 8);
        memcpy(&b, got.data() + t0 + 8 * k, 8);
        ASSERT_LE(std::fabs(a - b), bound) << "file " << i << " value " << k;
        *changed += a != b;
      }
    }
  }

  // Writes the batch under scheme/group and checks every file reads back exactly.
  BatchResult write_and_check(const std::string& scheme, int group, ContainerReader& r) {
    cfg_.scheme = scheme;
    cfg_.group_size = group;
    cfg_.block_bytes = 1024;
    BatchResult res;
    std::string err;
    EXPECT_TRUE(write_container(job(), files_, res, &err)) << err;
    std::vector<std::string> got = read_back(res.container);
    EXPECT_EQ(got.size(), contents_.size());
    for (size_t i = 0; i < got.size() && i < contents_.size(); ++i)
      EXPECT_TRUE(got[i] == contents_[i]) << scheme << " group " << group << " file " << i;
    EXPECT_TRUE(r.open(store() + "/" + res.container, &err)) << err;
    return res;
  }

  static std::set<std::string> keys(const ContainerReader& r) {
    std::set<std::string> k;
    for (const StreamInfo& s : r.streams()) k.insert(s.key);
    return k;
  }

  std::vector<BatchFile> files_;
  std::vector<std::string> contents_;
};

TEST_F(MergeSchemes, EverySchemeAndGroupSizeRestoresExactly) {
  for (const char* scheme : {"agnostic", "agnostic-block", "aware", "aware-block", "auto"})
    for (int group : {0, 1, 2, 4, 16}) {
      ContainerReader r;
      write_and_check(scheme, group, r);
      for (const StreamInfo& s : r.streams()) EXPECT_EQ(s.scheme, scheme);
    }
}

TEST_F(MergeSchemes, AwareMergesEachVariableAcrossRanksInRankOrder) {
  ContainerReader r;
  BatchResult res = write_and_check("aware", 0, r);
  std::set<std::string> k = keys(r);
  EXPECT_TRUE(k.count("temperature_F64LE_Array1D"));
  EXPECT_TRUE(k.count("pressure_F32LE_Array1D"));
  EXPECT_TRUE(k.count("residual"));
  // The temperature stream is rank 0's, then rank 1's, ... (ranks came out of order).
  size_t t = 0;
  for (; t < r.streams().size(); ++t)
    if (r.streams()[t].key == "temperature_F64LE_Array1D") break;
  ASSERT_LT(t, r.streams().size());
  uint64_t expect_off = 0;
  for (int rank = 0; rank < 6; ++rank) {
    for (const FileEntry& f : r.files()) {
      if (f.rank != rank) continue;
      bool found = false;
      for (const FileRange& x : f.ranges)
        if (x.stream == t) {
          EXPECT_EQ(x.file_off, 12u);
          EXPECT_EQ(x.stream_off, expect_off) << "rank " << rank;
          expect_off += x.len;
          found = true;
        }
      EXPECT_TRUE(found) << rank;
    }
  }
  // The grid every rank holds is stored once.
  EXPECT_EQ(res.dedup_bytes, 5u * 3000 * 8);
  for (const StreamReport& s : res.streams) {
    EXPECT_GT(s.raw, 0u) << s.key;
    EXPECT_FALSE(s.chain.empty()) << s.key;
  }
}

// An fsync's batch (BatchFile.synced) runs no codec trial for a small stream (byte
// shuffle and the fast level, its trial deferred) but does for a large one, whose tuned
// chain stores the smooth field in fewer bytes than plain zstd at the fast level would.
TEST_F(MergeSchemes, AnFsyncTriesCodecsOnlyForLargeStreams) {
  files_.clear();
  contents_.clear();
  const int n = 1 << 20;  // temperature and grid: 8 MiB per rank, pressure 4 MiB
  for (int rank : {0, 1})
    add(data_ + "/rank_" + std::to_string(rank) + ".bin", rank, checkpoint(rank, n));
  for (BatchFile& f : files_) f.synced = true;
  cfg_.scheme = "aware";
  CodecChoices choices;
  BatchResult res;
  std::string err;
  ASSERT_TRUE(write_container(job(nullptr, &choices), files_, res, &err)) << err;
  const codec::Layout f64{"F64LE", {}};
  const std::string fast = codec::shuffle_chain(f64, cfg_.sync_level).name;
  bool saw_large = false, saw_small = false;
  for (const StreamReport& s : res.streams) {
    if (s.key.rfind("temperature_", 0) == 0) {
      saw_large = true;
      EXPECT_GE(s.raw, 16u << 20);
      EXPECT_NE(s.chain, fast) << "a 16 MiB stream is worth its trial";
      // Plain zstd at the fast level on the same bytes (the field of both ranks, in rank
      // order).
      std::string field;
      for (const std::string& c : contents_) field += c.substr(12, n * sizeof(double));
      std::vector<uint8_t> byte_chained;
      codec::Layout bytes_layout;
      ASSERT_TRUE(codec::encode(codec::bytes_chain(cfg_.sync_level), bytes_layout,
                                reinterpret_cast<const uint8_t*>(field.data()), field.size(),
                                byte_chained));
      EXPECT_LT(s.stored * 10, byte_chained.size() * 9) << s.chain;
    } else if (s.key.rfind("pressure_", 0) == 0) {
      saw_small = true;
      EXPECT_LT(s.raw, 16u << 20);
      EXPECT_EQ(s.chain, fast) << "an 8 MiB stream waits for its trial";
      EXPECT_LT(s.stored * 10, s.raw * 9) << "the shuffled floats shrink at the fast level";
    }
  }
  EXPECT_TRUE(saw_large && saw_small);
  EXPECT_TRUE(choices.run_deferred()) << "the small stream's trial was deferred";
  std::vector<std::string> got = read_back(res.container);
  ASSERT_EQ(got.size(), contents_.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i] == contents_[i]) << i;
}

// Pieces are first compared by a fingerprint of their length and three pages; two grids
// that agree there and differ between them must both be stored, and still read back.
TEST_F(MergeSchemes, PiecesAlikeOnlyWhereSampledAreNotDeduplicated) {
  files_.clear();
  contents_.clear();
  for (int rank = 0; rank < 4; ++rank) {
    std::string bytes = checkpoint(rank, 3000);
    // The grid starts at byte 12 + 3000 * 12; double 700 of it lies between the first and
    // the middle sampled pages. Ranks 2 and 3 change it (differently).
    if (rank >= 2) {
      double v = 1e6 + rank;
      memcpy(&bytes[12 + 3000 * 12 + 700 * 8], &v, sizeof(v));
    }
    add(data_ + "/rank_" + std::to_string(rank) + ".bin", rank, bytes);
  }
  ContainerReader r;
  BatchResult res = write_and_check("aware", 0, r);
  // Rank 1's grid equals rank 0's; ranks 2 and 3 each hold a grid of their own.
  EXPECT_EQ(res.dedup_bytes, 1u * 3000 * 8);
}

TEST_F(MergeSchemes, GroupsGetTheirOwnStreams) {
  ContainerReader r;
  write_and_check("aware", 2, r);
  std::set<std::string> k = keys(r);
  EXPECT_TRUE(k.count("temperature_F64LE_Array1D"));
  EXPECT_TRUE(k.count("temperature_F64LE_Array1D@g1"));
  EXPECT_TRUE(k.count("temperature_F64LE_Array1D@g2"));
  EXPECT_FALSE(k.count("temperature_F64LE_Array1D@g3"));
  // The file of rank 6 (no schema) is in the last group's agnostic stream.
  EXPECT_TRUE(k.count("agnostic@g3"));
  EXPECT_FALSE(k.count("residual@g3"));
}

TEST_F(MergeSchemes, BlockSchemesInterleaveRanks) {
  ContainerReader r;
  write_and_check("agnostic-block", 0, r);
  ASSERT_EQ(r.streams().size(), 1u);
  // Blocks of 1 KiB: each file is many ranges, and rank 0's second block comes after
  // every rank's first.
  for (const FileEntry& f : r.files()) EXPECT_GT(f.ranges.size(), 5u) << f.path;
  ContainerReader a;
  write_and_check("aware-block", 0, a);
  EXPECT_TRUE(keys(a).count("pressure_F32LE_Array1D"));
}

TEST_F(MergeSchemes, LossyOnlyWhereOptedInAndWithinItsBound) {
  cfg_.lossy = "temperature_*=abs:0.01";
  cfg_.scheme = "auto";
  cfg_.codec_min_mbps = 0;  // what is chosen must not depend on the build's speed
  // The end of rank 5's temperature is random bit patterns of every magnitude, which no
  // 0.01 step quantizes: its chunks fall back to an exact codec inside the lossy stream.
  size_t five = 0;
  while (files_[five].rank != 5) ++five;
  uint64_t x = 88172645463325252ull;
  for (size_t k = 2400; k < 3000; ++k) {
    double d;
    do {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      memcpy(&d, &x, 8);
    } while (!std::isfinite(d));
    memcpy(contents_[five].data() + 12 + 8 * k, &d, 8);
  }
  write_file(files_[five].data_path, contents_[five]);
  BatchResult res;
  std::string err;
  ASSERT_TRUE(write_container(job(), files_, res, &err)) << err;
  size_t changed = 0;
  ASSERT_NO_FATAL_FAILURE(expect_temperature_within(res, 0.01, &changed));
  EXPECT_GT(changed, 0u) << "the opted-in variable was stored exactly";
}

// A lossy variable whose values are noisy well above its bound takes the wavelet after
// quantization (the selector tries it beside the predictors), and restores within the
// bound through the container.
TEST_F(MergeSchemes, ANoisyLossyVariableTakesTheWaveletAndKeepsItsBound) {
  cfg_.lossy = "temperature_*=abs:0.01";
  cfg_.scheme = "auto";
  cfg_.codec_min_mbps = 0;  // what is chosen must not depend on the build's speed
  std::mt19937_64 g(7);
  std::normal_distribution<double> noise(0, 1);
  for (size_t i = 0; i < files_.size(); ++i) {
    if (files_[i].rank == 6) continue;
    for (size_t k = 0; k < 3000; ++k) {
      const double v = 280 + 10 * std::sin(double(k) / 50) + noise(g);
      memcpy(contents_[i].data() + 12 + 8 * k, &v, 8);
    }
    write_file(files_[i].data_path, contents_[i]);
  }
  BatchResult res;
  std::string err;
  ASSERT_TRUE(write_container(job(), files_, res, &err)) << err;
  bool wavelet = false;
  for (const StreamReport& s : res.streams)
    if (s.key.rfind("temperature", 0) == 0) wavelet = s.chain.find("wavelet") != std::string::npos;
  EXPECT_TRUE(wavelet);
  size_t changed = 0;
  ASSERT_NO_FATAL_FAILURE(expect_temperature_within(res, 0.01, &changed));
}

TEST_F(MergeSchemes, NewFilesWithHolesMergeTheirWrittenVariables) {
  // Every file is new (a `create`: the bytes written over zeros); rank 2 never wrote a
  // page in the middle of its temperature, which stays a hole.
  for (BatchFile& f : files_) {
    f.created = true;
    f.extents = {{0, f.size}};
  }
  size_t two = 0;
  while (files_[two].rank != 2) ++two;
  const uint64_t hole_b = 8192, hole_e = 12288;
  std::string& c = contents_[two];
  std::fill(c.begin() + hole_b, c.begin() + hole_e, '\0');
  // Staged as a sparse file: the hole is never written, as in the application's file.
  ::unlink(files_[two].data_path.c_str());
  int fd = ::open(files_[two].data_path.c_str(), O_WRONLY | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, c.data(), hole_b, 0), static_cast<ssize_t>(hole_b));
  ASSERT_EQ(::pwrite(fd, c.data() + hole_e, c.size() - hole_e, hole_e),
            static_cast<ssize_t>(c.size() - hole_e));
  ::close(fd);
  files_[two].extents = {{0, hole_b}, {hole_e, files_[two].size}};
  for (const char* scheme : {"aware", "aware-block", "auto", "agnostic"}) {
    ContainerReader r;
    write_and_check(scheme, 0, r);
    const FileEntry* f = nullptr;
    for (const FileEntry& e : r.files())
      if (e.rank == 2) f = &e;
    ASSERT_TRUE(f);
    for (const FileRange& x : f->ranges)
      EXPECT_FALSE(x.file_off < hole_e && hole_b < x.file_off + x.len)
          << scheme << ": a range covers the hole";
    if (std::string(scheme) != "agnostic") {
      EXPECT_TRUE(keys(r).count("pressure_F32LE_Array1D")) << scheme;
    }
  }
}

TEST_F(MergeSchemes, UnknownSchemeIsAnError) {
  cfg_.scheme = "smart";
  BatchResult res;
  std::string err;
  EXPECT_FALSE(write_container(job(), files_, res, &err));
  EXPECT_NE(err.find("unknown merge scheme 'smart'"), std::string::npos) << err;
}

TEST_F(MergeSchemes, AFlippedByteNamesContainerStreamAndChunk) {
  ContainerReader r;
  BatchResult res = write_and_check("aware", 0, r);
  size_t t = 0;
  for (; t < r.streams().size(); ++t)
    if (r.streams()[t].key == "pressure_F32LE_Array1D") break;
  ASSERT_LT(t, r.streams().size());
  ASSERT_FALSE(r.streams()[t].chunks.empty());
  const ChunkInfo& c = r.streams()[t].chunks.back();
  std::string path = store() + "/" + res.container;
  std::string bytes = read_file(path);
  bytes[c.offset + c.comp_size / 2] ^= 0x10;
  write_file(path, bytes);
  ContainerReader bad;
  std::string err;
  ASSERT_TRUE(bad.open(path, &err)) << err;
  bool any_failed = false;
  for (size_t i = 0; i < bad.files().size(); ++i) {
    std::vector<uint8_t> got;
    if (bad.read_file(i, got, &err)) continue;
    any_failed = true;
    EXPECT_NE(err.find(path), std::string::npos) << err;
    EXPECT_NE(err.find("stream 'pressure_F32LE_Array1D'"), std::string::npos) << err;
    EXPECT_NE(err.find("chunk " + std::to_string(r.streams()[t].chunks.size() - 1)),
              std::string::npos)
        << err;
  }
  EXPECT_TRUE(any_failed);
}

// A typed stream's chunks: whole rows, and whole planes of the two innermost dimensions
// where two fit one chunk (the 3-D predictor's grid then starts where the data's does);
// a byte stream's the target; dimensions too large for a chunk, or hostile ones, give
// whole elements and never overflow.
TEST(MergePlan, TypedChunksHoldWholeRowsAndWholePlanes) {
  const uint64_t target = 4 << 20;
  PlannedStream s;
  s.typed = true;
  s.layout = {"F64LE", {48, 48}};
  EXPECT_EQ(stream_chunk_len(s, target), target / (48 * 48 * 8) * (48 * 48 * 8));
  s.layout = {"F64LE", {48}};
  EXPECT_EQ(stream_chunk_len(s, target), target / (48 * 8) * (48 * 8));
  s.layout = {"F64LE", {3000, 3000}};  // a plane of 72 MB: rows only
  EXPECT_EQ(stream_chunk_len(s, target), target / (3000 * 8) * (3000 * 8));
  s.layout = {"F32LE", {1ull << 62, 1ull << 62}};  // rows too long: whole elements
  EXPECT_EQ(stream_chunk_len(s, target), target);
  s.layout = {"F64LE", {~0ull / 3, 16}};
  EXPECT_EQ(stream_chunk_len(s, target), target / 128 * 128);
  PlannedStream bytes;
  EXPECT_EQ(stream_chunk_len(bytes, target), target);
}

}  // namespace ckptfwd::fwd::test
