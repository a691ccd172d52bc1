// Container format version 2: dtype hints per file. Round trip through ContainerWriter,
// version 1 containers (no hints) still read, and malformed hints refused by the writer and
// rejected by the reader with an error naming the problem (hostile input, never UB).
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <functional>

#include "base/dtype.h"
#include "core_test_util.h"
#include "store/container/container.h"

namespace ckptfwd {
namespace {

using test::TempDir;

constexpr uint8_t kF64 = static_cast<uint8_t>(DtypeCode::kF64LE);
constexpr uint8_t kI32 = static_cast<uint8_t>(DtypeCode::kI32LE);

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 31 + 7);
  return v;
}

bool write_with_hints(const std::string& path, const std::vector<uint8_t>& content,
                      std::vector<DtypeHint> hints, std::string* err) {
  ContainerWriter w;
  if (!w.open(path, err)) return false;
  uint32_t s = w.add_stream("agnostic", "bytes", "agnostic");
  if (!w.append_chunk(s, encode_chunk(content.data(), content.size(), "raw", 0), err)) return false;
  FileEntry f;
  f.path = "/ckpt/a.bin";
  f.size = content.size();
  f.hash = content_hash(content.data(), content.size());
  f.ranges.push_back({0, content.size(), 0, 0});
  f.hints = std::move(hints);
  w.add_file(std::move(f));
  return w.commit(err);
}

// A hand-made container (the test's own encoder, independent of ContainerWriter): one raw
// chunk holding `content`, one file covering it. Version 1 has no hint table; for version
// 2 `hint_table` supplies the bytes after the ranges (u32 count + records, possibly bad).
class Blob {
 public:
  void u8(uint8_t v) { b.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    b.insert(b.end(), s.begin(), s.end());
  }
  std::vector<uint8_t> b;
};

void hint_record(Blob& x, uint64_t off, uint64_t len, uint8_t code) {
  x.u64(off);
  x.u64(len);
  x.u8(code);
}

std::vector<uint8_t> handmade(uint32_t version, const std::vector<uint8_t>& content,
                              const std::function<void(Blob&)>& hint_table) {
  Blob out;
  const char magic[] = "CKFWDC01";
  out.b.insert(out.b.end(), magic, magic + 8);
  out.u32(version);
  out.u32(0);
  out.b.insert(out.b.end(), content.begin(), content.end());
  uint64_t h = XXH64(content.data(), content.size(), 0);
  Blob x;
  x.u32(1);
  x.str("agnostic");
  x.str("bytes");
  x.str("agnostic");
  x.u64(content.size());
  x.u32(1);
  x.u8(0);  // raw
  x.u32(static_cast<uint32_t>(content.size()));
  x.u32(static_cast<uint32_t>(content.size()));
  x.u64(16);
  x.u64(h);
  x.u64(h);
  x.u32(1);
  x.str("/ckpt/old.bin");
  x.u32(3);
  x.u64(content.size());
  x.u32(0644);
  x.u64(12345);
  x.u64(7);
  x.u64(h);
  x.u32(1);
  x.u64(0);
  x.u64(content.size());
  x.u32(0);
  x.u64(0);
  if (version >= 2) hint_table(x);
  uint64_t index_off = out.b.size();
  out.b.insert(out.b.end(), x.b.begin(), x.b.end());
  out.u64(index_off);
  out.u64(x.b.size());
  out.u64(XXH64(x.b.data(), x.b.size(), 0));
  const char end[] = "CKFWDEND";
  out.b.insert(out.b.end(), end, end + 8);
  return out.b;
}

TEST(ContainerHints, RoundTrip) {
  TempDir d;
  auto content = pattern(8192);
  std::vector<DtypeHint> hints = {{4096, 4096, kI32}, {0, 1024, kF64}, {1024, 8, kI32}};
  std::string err;
  ASSERT_TRUE(write_with_hints(d.path() + "/c.ckc", content, hints, &err)) << err;
  ContainerReader r;
  ASSERT_TRUE(r.open(d.path() + "/c.ckc", &err)) << err;
  ASSERT_EQ(r.files().size(), 1u);
  std::vector<DtypeHint> want = {{0, 1024, kF64}, {1024, 8, kI32}, {4096, 4096, kI32}};
  EXPECT_EQ(r.files()[0].hints, want);  // stored sorted
  std::vector<uint8_t> back;
  ASSERT_TRUE(r.read_file(0, back, &err)) << err;
  EXPECT_EQ(back, content);
  std::vector<std::string> problems;
  EXPECT_TRUE(r.verify(problems)) << (problems.empty() ? "" : problems[0]);
}

TEST(ContainerHints, NoHintsRoundTrip) {
  TempDir d;
  auto content = pattern(100);
  std::string err;
  ASSERT_TRUE(write_with_hints(d.path() + "/c.ckc", content, {}, &err)) << err;
  ContainerReader r;
  ASSERT_TRUE(r.open(d.path() + "/c.ckc", &err)) << err;
  EXPECT_TRUE(r.files()[0].hints.empty());
}

TEST(ContainerHints, WrittenAsTheCurrentVersion) {
  TempDir d;
  std::string err;
  ASSERT_TRUE(write_with_hints(d.path() + "/c.ckc", pattern(10), {}, &err)) << err;
  auto bytes = test::read_all(d.path() + "/c.ckc");
  ASSERT_GE(bytes.size(), 12u);
  EXPECT_EQ(bytes[8], 6);  // version 6: placements (5 made content hashes XXH3, 3 added maps)
}

TEST(ContainerHints, Version1StillReadable) {
  TempDir d;
  auto content = pattern(5000);
  test::write_all(d.path() + "/v1.ckc", handmade(1, content, nullptr));
  ContainerReader r;
  std::string err;
  ASSERT_TRUE(r.open(d.path() + "/v1.ckc", &err)) << err;
  ASSERT_EQ(r.files().size(), 1u);
  EXPECT_EQ(r.files()[0].path, "/ckpt/old.bin");
  EXPECT_EQ(r.files()[0].rank, 3);
  EXPECT_TRUE(r.files()[0].hints.empty());
  std::vector<uint8_t> back;
  ASSERT_TRUE(r.read_file(0, back, &err)) << err;
  EXPECT_EQ(back, content);
}

TEST(ContainerHints, HandmadeVersion2Readable) {
  TempDir d;
  auto content = pattern(5000);
  test::write_all(d.path() + "/v2.ckc", handmade(2, content, [](Blob& x) {
                    x.u32(2);
                    hint_record(x, 0, 800, kF64);
                    hint_record(x, 800, 4200, kI32);
                  }));
  ContainerReader r;
  std::string err;
  ASSERT_TRUE(r.open(d.path() + "/v2.ckc", &err)) << err;
  std::vector<DtypeHint> want = {{0, 800, kF64}, {800, 4200, kI32}};
  EXPECT_EQ(r.files()[0].hints, want);
}

TEST(ContainerHints, UnknownVersionsRejected) {
  TempDir d;
  std::string err;
  for (uint32_t v : {0u, 7u}) {
    test::write_all(d.path() + "/v.ckc", handmade(v, pattern(10), [](Blob& x) { x.u32(0); }));
    ContainerReader r;
    EXPECT_FALSE(r.open(d.path() + "/v.ckc", &err)) << v;
    EXPECT_NE(err.find("format version"), std::string::npos) << err;
  }
}

TEST(ContainerHints, MalformedHintsRejectedByReader) {
  struct Case {
    const char* name;
    std::function<void(Blob&)> table;
    const char* want;
  };
  const Case cases[] = {
      {"bad code 0",
       [](Blob& x) {
         x.u32(1);
         hint_record(x, 0, 10, 0);
       },
       "dtype code"},
      {"bad code 11",
       [](Blob& x) {
         x.u32(1);
         hint_record(x, 0, 10, kMaxDtypeCode + 1);
       },
       "dtype code"},
      {"empty",
       [](Blob& x) {
         x.u32(1);
         hint_record(x, 0, 0, kF64);
       },
       "empty"},
      {"overlap",
       [](Blob& x) {
         x.u32(2);
         hint_record(x, 0, 100, kF64);
         hint_record(x, 50, 10, kI32);
       },
       "overlaps"},
      {"unsorted",
       [](Blob& x) {
         x.u32(2);
         hint_record(x, 100, 8, kF64);
         hint_record(x, 0, 8, kI32);
       },
       "out of order"},
      {"beyond size",
       [](Blob& x) {
         x.u32(1);
         hint_record(x, 4990, 11, kF64);
       },
       "beyond the file size"},
      {"offset wraps",
       [](Blob& x) {
         x.u32(1);
         hint_record(x, UINT64_MAX - 3, 8, kF64);
       },
       "beyond the file size"},
      {"huge count",
       [](Blob& x) {
         x.u32(0xFFFFFFFFu);
         hint_record(x, 0, 8, kF64);
       },
       "hint count"},
      {"truncated",
       [](Blob& x) {
         x.u32(1);
         x.u64(0);
       },
       "hint count"},
      {"no table", [](Blob&) {}, "truncated"},
      {"trailing",
       [](Blob& x) {
         x.u32(0);
         x.u8(1);
       },
       "trailing"},
  };
  TempDir d;
  for (const Case& c : cases) {
    test::write_all(d.path() + "/bad.ckc", handmade(2, pattern(5000), c.table));
    ContainerReader r;
    std::string err;
    EXPECT_FALSE(r.open(d.path() + "/bad.ckc", &err)) << c.name;
    EXPECT_NE(err.find(c.want), std::string::npos) << c.name << ": " << err;
    EXPECT_NE(err.find("bad.ckc"), std::string::npos) << c.name << ": " << err;
    EXPECT_TRUE(r.files().empty()) << c.name;
  }
}

TEST(ContainerHints, MalformedHintsRefusedByWriter) {
  TempDir d;
  auto content = pattern(1000);
  const std::vector<std::vector<DtypeHint>> bad = {
      {{0, 10, 0}},       {{0, 10, kMaxDtypeCode + 1}},
      {{0, 0, kF64}},     {{0, 100, kF64}, {50, 100, kI32}},
      {{900, 101, kF64}},
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    std::string err;
    std::string path = d.path() + "/w" + std::to_string(i) + ".ckc";
    EXPECT_FALSE(write_with_hints(path, content, bad[i], &err)) << i;
    EXPECT_NE(err.find("dtype hint"), std::string::npos) << i << ": " << err;
    EXPECT_NE(::access(path.c_str(), F_OK), 0) << i << ": nothing may appear at the final path";
  }
}

}  // namespace
}  // namespace ckptfwd
