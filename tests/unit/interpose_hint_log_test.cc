// Dtype hints files (base/dtype.h format) written by the library's hint log: records
// round-trip, sequential writes of one type merge, spills keep every record, a period
// without typed writes hands over nothing.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "base/dtype.h"
#include "interpose/track/hint_log.h"

namespace ckptfwd::interpose {
namespace {

using Rec = std::tuple<uint64_t, uint64_t, uint8_t>;

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/ckptfwd-hintlog-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

std::vector<Rec> read_hints(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<unsigned char> b((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(b.size() % kHintRecordBytes, 0u);
  std::vector<Rec> out;
  for (size_t i = 0; i + kHintRecordBytes <= b.size(); i += kHintRecordBytes) {
    uint64_t off = 0, len = 0;
    for (int k = 7; k >= 0; --k) off = off << 8 | b[i + k];
    for (int k = 7; k >= 0; --k) len = len << 8 | b[i + 8 + k];
    out.emplace_back(off, len, b[i + 16]);
  }
  return out;
}

TEST(InterposeHintLog, RecordsRoundTripThroughTheFile) {
  TempDir dir;
  HintLog* h = hint_log_create(7, dir.path.c_str());
  ASSERT_NE(h, nullptr);
  const auto f64 = static_cast<uint8_t>(DtypeCode::kF64LE);
  const auto i32 = static_cast<uint8_t>(DtypeCode::kI32LE);
  hint_log_add(h, 4096, 800, f64);
  hint_log_add(h, 4896, 800, f64);              // continues the previous record: merged
  hint_log_add(h, 0, 16, i32);                  // another type, earlier offset
  hint_log_add(h, 1ull << 40, 8, f64);          // large offsets keep all 64 bits
  hint_log_add(h, 100, 50, 0);                  // kBytes is never a hint
  hint_log_add(h, 100, 50, kMaxDtypeCode + 1);  // nor an unknown code
  hint_log_add(h, 200, 0, f64);                 // nor an empty range
  char name[96];
  ASSERT_TRUE(hint_log_hand_over(h, name, sizeof(name)));
  EXPECT_EQ(std::string(name).rfind("h7." + std::to_string(getpid()) + ".", 0), 0u) << name;
  std::string file = dir.path + "/" + name;
  struct stat st {};
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(read_hints(file),
            (std::vector<Rec>{{4096, 1600, f64}, {0, 16, i32}, {1ull << 40, 8, f64}}));
  // Nothing typed since: no file for the next hand-over.
  EXPECT_FALSE(hint_log_hand_over(h, name, sizeof(name)));
  hint_log_destroy(h);
}

TEST(InterposeHintLog, SpillsKeepEveryRecordAndEachHandOverStartsAFreshFile) {
  TempDir dir;
  HintLog* h = hint_log_create(3, dir.path.c_str());
  ASSERT_NE(h, nullptr);
  const auto f32 = static_cast<uint8_t>(DtypeCode::kF32LE);
  std::vector<Rec> want;
  for (uint64_t i = 0; i < 3 * kMaxMemHints + 5; ++i) {  // gaps: no merging
    hint_log_add(h, i * 100, 40, f32);
    want.emplace_back(i * 100, 40, f32);
  }
  char first[96];
  ASSERT_TRUE(hint_log_hand_over(h, first, sizeof(first)));
  EXPECT_EQ(read_hints(dir.path + "/" + first), want);
  hint_log_add(h, 8, 8, static_cast<uint8_t>(DtypeCode::kU16LE));
  char second[96];
  ASSERT_TRUE(hint_log_hand_over(h, second, sizeof(second)));
  EXPECT_STRNE(first, second);
  EXPECT_EQ(read_hints(dir.path + "/" + second),
            (std::vector<Rec>{{8, 8, static_cast<uint8_t>(DtypeCode::kU16LE)}}));
  hint_log_destroy(h);
}

TEST(InterposeHintLog, DestroyRemovesAFileNeverHandedOver) {
  TempDir dir;
  HintLog* h = hint_log_create(9, dir.path.c_str());
  ASSERT_NE(h, nullptr);
  for (uint64_t i = 0; i < kMaxMemHints + 1; ++i)  // forces a spill: the file exists
    hint_log_add(h, i * 10, 4, static_cast<uint8_t>(DtypeCode::kI32LE));
  std::string file = dir.path + "/" + h->file.name;
  ASSERT_EQ(access(file.c_str(), F_OK), 0);
  hint_log_destroy(h);
  EXPECT_NE(access(file.c_str(), F_OK), 0);
}

TEST(InterposeHintLog, UnusableDirIsNoHintsNotAFailure) {
  HintLog* h = hint_log_create(1, "/nonexistent-ckptfwd-dir");
  ASSERT_NE(h, nullptr);
  hint_log_add(h, 0, 8, static_cast<uint8_t>(DtypeCode::kF64LE));
  char name[96];
  EXPECT_FALSE(hint_log_hand_over(h, name, sizeof(name)));
  hint_log_destroy(h);
}

}  // namespace
}  // namespace ckptfwd::interpose
