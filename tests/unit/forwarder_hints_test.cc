// Dtype hints (base/dtype.h) through the forwarder: the merge rules of hints.h, and a
// version CLOSEd with a hints file commits a container whose FileEntry.hints are the
// merged, clipped, coalesced hints; a malformed hints file is ignored, never failing the
// version.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "base/dtype.h"
#include "forwarder/staging/hints.h"
#include "forwarder_test_util.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd::test {

constexpr uint8_t kF64 = static_cast<uint8_t>(DtypeCode::kF64LE);
constexpr uint8_t kI32 = static_cast<uint8_t>(DtypeCode::kI32LE);

std::string hint_records(const std::vector<DtypeHint>& hs) {
  std::string out;
  for (const DtypeHint& h : hs) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(h.file_off >> (8 * i)));
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(h.len >> (8 * i)));
    out.push_back(static_cast<char>(h.dtype));
  }
  return out;
}

TEST(Hints, LaterRecordsWinAndAdjacentCoalesce) {
  Hints set;
  hints_apply(set, {{0, 100, kF64}, {40, 20, kI32}, {100, 50, kF64}});
  Hints want = {{0, 40, kF64}, {40, 20, kI32}, {60, 90, kF64}};
  EXPECT_EQ(set, want);
  hints_apply(set, {{30, 100, kI32}});  // covers parts of three
  want = {{0, 30, kF64}, {30, 100, kI32}, {130, 20, kF64}};
  EXPECT_EQ(set, want);
  hints_apply(set, {{0, 1000, kF64}});
  want = {{0, 1000, kF64}};
  EXPECT_EQ(set, want);
  EXPECT_EQ(hints_clip(set, 10), (Hints{{0, 10, kF64}}));
  EXPECT_EQ(hints_within(set, {{5, 10}, {20, 30}}), (Hints{{5, 5, kF64}, {20, 10, kF64}}));
  EXPECT_EQ(hints_bytes(set), 1000u);
}

TEST(Hints, ViewsRideAlongTheRecordsAndRoundTrip) {
  char dir[] = "/tmp/ckptfwd-hints-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/h1.0.0";
  ViewShape a;
  a.disp = 128;
  a.dtype = kI32;
  a.ndims = 2;
  a.gsizes[0] = 16;
  a.gsizes[1] = 12;
  ViewShape b = a;
  b.disp = 896;
  b.dtype = kF64;
  b.ndims = 3;
  b.gsizes[2] = 7;
  std::string err;
  ASSERT_TRUE(write_hints_file(path, {{0, 100, kF64}, {128, 768, kI32}}, &err, {a, b})) << err;
  std::vector<DtypeHint> recs;
  std::vector<ViewShape> views = {a};  // already known: not added twice
  ASSERT_TRUE(read_hints_file(path, recs, &err, &views)) << err;
  EXPECT_EQ(recs, (std::vector<DtypeHint>{{0, 100, kF64}, {128, 768, kI32}}));
  ASSERT_EQ(views.size(), 2u);
  EXPECT_TRUE(views[1] == b);
  // Without a place for them, views are skipped, records still read.
  recs.clear();
  ASSERT_TRUE(read_hints_file(path, recs, &err)) << err;
  EXPECT_EQ(recs.size(), 2u);
  // A view cut short, of a bad dtype or of an empty dimension: the file is refused.
  uint8_t rec[(1 + kMaxViewDims) * kHintRecordBytes];
  const size_t n = encode_view_records(b, rec);
  auto refused = [&](std::vector<uint8_t> bytes, const char* what) {
    unlink(path.c_str());
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
    close(fd);
    std::vector<DtypeHint> r;
    std::vector<ViewShape> v;
    EXPECT_FALSE(read_hints_file(path, r, &err, &v)) << what;
    EXPECT_NE(err.find("view"), std::string::npos) << err;
    EXPECT_TRUE(r.empty() && v.empty()) << what;
  };
  refused(std::vector<uint8_t>(rec, rec + n - kHintRecordBytes), "cut short");
  std::vector<uint8_t> bad(rec, rec + n);
  bad[9] = 0;  // dtype code 0
  refused(bad, "bytes dtype");
  bad.assign(rec, rec + n);
  for (int i = 0; i < 8; ++i) bad[kHintRecordBytes + i] = 0;  // gsizes[0] = 0
  refused(bad, "empty dimension");
  bad.assign(rec, rec + n);
  bad[8] = 9;  // 9 dimensions
  refused(bad, "too many dimensions");
  unlink(path.c_str());
  rmdir(dir);
}

TEST(Hints, FileNames) {
  EXPECT_TRUE(is_hints_file_name("h12.345.6", 12));
  EXPECT_FALSE(is_hints_file_name("h12.345.6", 13));
  EXPECT_FALSE(is_hints_file_name("h012.345.6", 12));
  EXPECT_FALSE(is_hints_file_name("h12.345", 12));
  EXPECT_FALSE(is_hints_file_name("h12.345.6/x", 12));
  EXPECT_FALSE(is_hints_file_name("../h12.345.6", 12));
  EXPECT_FALSE(is_hints_file_name("v12.ext.345.6", 12));
  EXPECT_EQ(hints_file_name(12, 345, 6), "h12.345.6");
}

class HintsForwarderTest : public ForwarderTest {
 protected:
  // OPEN, write bytes, drop a hints file with `records` raw bytes, CLOSE naming it.
  // Returns the hints file name.
  std::string write_with_hints(Client& c, const std::string& path, const std::string& bytes,
                               const std::string& records) {
    auto r = c.call({"OPEN", path, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
    EXPECT_EQ(r.size(), 5u);
    if (r.size() != 5) return "";
    write_file(r[2], bytes);
    std::string name = hints_file_name(std::stoull(r[1]), 4242, 1);
    write_file(std::string(paths_.dir) + "/" + name, records);
    EXPECT_EQ(c.call({"CLOSE", r[1], std::to_string(bytes.size()), "hints=" + name})[0], "OK");
    return name;
  }

  const FileEntry* committed(const std::string& path, ContainerReader& r, std::string* bytes) {
    Catalog cat;
    std::string err;
    EXPECT_TRUE(cat.load(store(), &err)) << err;
    const CatalogEntry* e = cat.find(path);
    if (!e) return nullptr;
    EXPECT_TRUE(r.open(store() + "/" + e->container, &err)) << err;
    std::vector<uint8_t> got;
    EXPECT_TRUE(r.read_file(e->file_index, got, &err)) << err;
    bytes->assign(got.begin(), got.end());
    return &r.files()[e->file_index];
  }
};

TEST_F(HintsForwarderTest, CloseWithHintsCommitsMergedHints) {
  start();
  auto c = client();
  ASSERT_EQ(c->call({"HELLO", "4242", "0"})[0], "OK");
  std::string data = payload(10000, 7);
  std::string name =
      write_with_hints(*c, data_ + "/field.bin", data,
                       hint_records({{0, 8000, kF64}, {4000, 2000, kI32}, {8000, 4000, kF64}}));
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  ContainerReader r;
  std::string got;
  const FileEntry* f = committed(data_ + "/field.bin", r, &got);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(got, data);
  // Later records win; the tail beyond the size is clipped; [6000,8000) and [8000,10000)
  // are one F64 hint.
  std::vector<DtypeHint> want = {{0, 4000, kF64}, {4000, 2000, kI32}, {6000, 4000, kF64}};
  EXPECT_EQ(f->hints, want);
  EXPECT_FALSE(fs::exists(std::string(paths_.dir) + "/" + name))
      << "hints file kept after the commit";
  auto js = c->call({"STATS"});
  ASSERT_EQ(js.size(), 2u);
  EXPECT_NE(js[1].find("\"bytes_typed\":10000"), std::string::npos) << js[1];
}

TEST_F(HintsForwarderTest, HintsAndExtentsFieldsTogetherOnSync) {
  start();
  auto c = client();
  ASSERT_EQ(c->call({"HELLO", "4242", "0"})[0], "OK");
  auto r = c->call({"OPEN", data_ + "/s.bin", std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
  ASSERT_EQ(r.size(), 5u);
  std::string data = payload(4096, 3);
  write_file(r[2], data);
  std::string name = hints_file_name(std::stoull(r[1]), 4242, 1);
  write_file(std::string(paths_.dir) + "/" + name, hint_records({{0, 4096, kI32}}));
  // A not-shared version: an extents field is ignored, the hints field is used.
  ASSERT_EQ(c->call({"SYNC", r[1], "v" + r[1] + ".ext.4242.1", "hints=" + name})[0], "OK");
  ASSERT_EQ(c->call({"CLOSE", r[1], "4096"})[0], "OK");
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  ContainerReader rd;
  std::string got;
  const FileEntry* f = committed(data_ + "/s.bin", rd, &got);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(got, data);
  EXPECT_EQ(f->hints, (std::vector<DtypeHint>{{0, 4096, kI32}}));
  EXPECT_FALSE(fs::exists(std::string(paths_.dir) + "/" + name));
}

TEST_F(HintsForwarderTest, MalformedHintsFileIgnoredVersionCommitted) {
  start();
  auto c = client();
  ASSERT_EQ(c->call({"HELLO", "4242", "0"})[0], "OK");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"a.bin", hint_records({{0, 10, kF64}}).substr(0, 16)},  // not whole records
      {"b.bin", hint_records({{0, 10, kF64}, {10, 10, 0}})},   // code 0
      {"c.bin", hint_records({{0, 10, kMaxDtypeCode + 1}})},   // unknown code
      {"d.bin", hint_records({{UINT64_MAX - 4, 10, kF64}})},   // wraps
      {"e.bin", hint_records({{5, 0, kF64}})},                 // empty
  };
  std::map<std::string, std::string> data;
  std::vector<std::string> names;
  unsigned seed = 20;
  for (auto& [file, records] : bad) {
    data[file] = payload(3000, seed++);
    names.push_back(write_with_hints(*c, data_ + "/" + file, data[file], records));
  }
  // A name that is not a hints file of this version: ignored, and the file left alone.
  auto r = c->call({"OPEN", data_ + "/f.bin", std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
  ASSERT_EQ(r.size(), 5u);
  data["f.bin"] = payload(100, 99);
  write_file(r[2], data["f.bin"]);
  write_file(root_ + "/keep", "x");
  ASSERT_EQ(c->call({"CLOSE", r[1], "100", "hints=../keep"})[0], "OK");
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  EXPECT_TRUE(fs::exists(root_ + "/keep"));
  for (auto& [file, bytes] : data) {
    ContainerReader rd;
    std::string got;
    const FileEntry* f = committed(data_ + "/" + file, rd, &got);
    ASSERT_NE(f, nullptr) << file;
    EXPECT_EQ(got, bytes) << file;
    EXPECT_TRUE(f->hints.empty()) << file;
  }
  for (const std::string& n : names)
    EXPECT_FALSE(fs::exists(std::string(paths_.dir) + "/" + n)) << n;
  auto js = c->call({"STATS"});
  EXPECT_NE(js[1].find("\"bytes_typed\":0"), std::string::npos) << js[1];
  EXPECT_NE(js[1].find("\"files_committed\":6"), std::string::npos) << js[1];
}

}  // namespace ckptfwd::fwd::test
