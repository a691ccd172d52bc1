// Pieces tested on their own: the pipeline's stream cutting, meta files, stats JSON.

#include "forwarder/pipeline/pipeline.h"
#include "forwarder/staging/extents.h"
#include "forwarder/staging/staging.h"
#include "forwarder/state/stats.h"
#include "forwarder_test_util.h"
#include "store/container/container.h"

namespace ckptfwd::fwd::test {

TEST_F(ForwarderTest, PipelineChunksStraddleFilesAndRestoreExactly) {
  std::vector<std::string> contents = {payload(5000, 1),  "",           payload(100, 2), "",
                                       payload(12288, 3), payload(1, 4)};
  std::vector<BatchFile> files;
  for (size_t i = 0; i < contents.size(); ++i) {
    std::string staged = root_ + "/s" + std::to_string(i);
    write_file(staged, contents[i]);
    files.push_back(BatchFile{i + 1, staged, data_ + "/f" + std::to_string(i), static_cast<int>(i),
                              0644, 0, contents[i].size()});
  }
  cfg_.chunk_bytes = 4096;
  cfg_.writers = 3;
  BatchResult res;
  std::string err;
  ASSERT_TRUE(write_container({.cfg = cfg_, .store = store(), .node = "n"}, files, res, &err))
      << err;
  EXPECT_GT(res.bytes_stored, 0u);
  ContainerReader r;
  ASSERT_TRUE(r.open(store() + "/" + res.container, &err)) << err;
  ASSERT_EQ(r.files().size(), contents.size());
  ASSERT_EQ(r.streams().size(), 1u);
  EXPECT_EQ(r.streams()[0].key, "agnostic");
  EXPECT_EQ(r.streams()[0].raw_size, 5000u + 100 + 12288 + 1);
  for (size_t i = 0; i < contents.size(); ++i) {
    std::vector<uint8_t> got;
    ASSERT_TRUE(r.read_file(i, got, &err)) << err;
    EXPECT_EQ(std::string(got.begin(), got.end()), contents[i]) << i;
    EXPECT_EQ(r.files()[i].hash, content_hash(contents[i].data(), contents[i].size()));
    EXPECT_EQ(r.files()[i].ranges.size(), contents[i].empty() ? 0u : 1u);
  }
  std::vector<std::string> problems;
  EXPECT_TRUE(r.verify(problems));
}

TEST_F(ForwarderTest, MetaRoundTripsOddPaths) {
  std::string meta = root_ + "/m.meta", err;
  VersionMeta in{"/a dir/with\nnewline%and=eq", 5, 0751, 4242};
  ASSERT_TRUE(write_meta(meta, in, &err)) << err;
  VersionMeta out;
  ASSERT_TRUE(read_meta(meta, out, &err)) << err;
  EXPECT_EQ(out.path, in.path);
  EXPECT_EQ(out.rank, 5);
  EXPECT_EQ(out.mode, 0751u);
  EXPECT_EQ(out.pid, 4242);
  write_file(meta, "garbage");
  EXPECT_FALSE(read_meta(meta, out, &err));
}

TEST(ForwarderStats, JsonHasEveryKey) {
  Stats s;
  s.bytes_committed = 3000;
  s.bytes_stored = 1000;
  s.compress_ns = 1500000000;
  std::string j = s.to_json();
  for (const char* k :
       {"files_captured", "bytes_captured",     "files_committed", "bytes_committed",
        "bytes_stored",   "containers_written", "ratio",           "fallbacks",
        "errors",         "restores",           "bytes_restored",  "time_compress_s",
        "time_write_s",   "time_commit_s",      "uptime_s",        "pending_versions",
        "waves_sealed",   "waves_split",        "split_rate",      "time_hash_s",
        "peak_rss_bytes"})
    EXPECT_NE(j.find(std::string("\"") + k + "\":"), std::string::npos) << k << " in " << j;
  EXPECT_NE(j.find("\"ratio\":3.000"), std::string::npos) << j;
  EXPECT_NE(j.find("\"split_rate\":0.000"), std::string::npos) << j;  // no wave yet
  s.waves_sealed = 8;
  s.waves_split = 1;
  j = s.to_json();
  EXPECT_NE(j.find("\"split_rate\":0.125"), std::string::npos) << j;
  EXPECT_NE(j.find("\"time_compress_s\":1.500000"), std::string::npos) << j;
  // This test process is resident: its peak RSS is not zero.
  EXPECT_EQ(j.find("\"peak_rss_bytes\":0,"), std::string::npos) << j;
  EXPECT_EQ(j.front(), '{');
  EXPECT_EQ(j.back(), '}');
  char tiny[16];
  EXPECT_EQ(s.format_json(tiny, sizeof(tiny)), 0u);
}

// Several forwarders append to one stats file: each line names its node and job.
TEST(ForwarderStats, JsonNamesTheNode) {
  Stats s;
  EXPECT_EQ(s.to_json().find("\"node\""), std::string::npos) << "no node set, none written";
  s.set_node("n2.host-7");
  std::string j = s.to_json();
  EXPECT_EQ(j.rfind("{\"source\":\"forwarder\",\"node\":\"n2.host-7\",\"version\":\"", 0), 0u) << j;
  s.set_job("4711");
  j = s.to_json();
  EXPECT_EQ(j.rfind("{\"source\":\"forwarder\",\"node\":\"n2.host-7\",\"job\":\"4711\",", 0), 0u)
      << j;
}

}  // namespace ckptfwd::fwd::test

// The one reader of a "whole=<end>" value (CLOSE's field and the .meta line): anything but
// a plain decimal within kMaxExtentEnd leaves the extents unknown.
TEST(WholeEnd, OnlyAPlainNumberInRangeIsAnEnd) {
  using ckptfwd::fwd::kMaxExtentEnd;
  using ckptfwd::fwd::parse_whole_end;
  EXPECT_EQ(parse_whole_end("0"), 0);
  EXPECT_EQ(parse_whole_end("4096"), 4096);
  EXPECT_EQ(parse_whole_end(std::to_string(kMaxExtentEnd).c_str()),
            static_cast<int64_t>(kMaxExtentEnd));
  for (const char* bad : {"", "-1", "+5", "12x", " 12", "x", "99999999999999999999999"})
    EXPECT_EQ(parse_whole_end(bad), -1) << "'" << bad << "'";
  EXPECT_EQ(parse_whole_end(std::to_string(kMaxExtentEnd + 1).c_str()), -1);
}
