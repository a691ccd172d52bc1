// `ckptfwd stats` tables: the checkpoint wave counters of a forwarder record, and a stats
// file line written before they existed (its missing keys shown as "-").
#include <gtest/gtest.h>

#include "stats_format.h"

namespace ckptfwd::cli {

TEST(StatsFormat, ShowsWaveCountersAndSplitRate) {
  Json kv;
  ASSERT_TRUE(parse_stats_record(
      R"({"source":"forwarder","pid":7,"waves_sealed":8,"waves_split":1,"split_rate":0.125})",
      &kv));
  std::string t = format_stats_table(kv);
  EXPECT_NE(t.find("checkpoint waves sealed 8\n"), std::string::npos) << t;
  EXPECT_NE(t.find("waves split in batches 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("wave split rate        0.125 (12.5%)\n"), std::string::npos) << t;
}

TEST(StatsFormat, OlderRecordsWithoutWaveKeysStillPrint) {
  Json kv;
  ASSERT_TRUE(parse_stats_record(R"({"source":"forwarder","pid":7,"files_committed":3})", &kv));
  std::string t = format_stats_table(kv);
  EXPECT_NE(t.find("files committed        3\n"), std::string::npos) << t;
  EXPECT_NE(t.find("wave split rate        -\n"), std::string::npos) << t;
}

TEST(StatsFormat, RefusesWhatIsNotOneObject) {
  Json kv;
  EXPECT_FALSE(parse_stats_record(R"({"source":"forwarder",)", &kv));  // a torn line
  EXPECT_FALSE(parse_stats_record(R"([1,2])", &kv));
  EXPECT_FALSE(parse_stats_record("", &kv));
  EXPECT_TRUE(kv.is_null());
  // Escapes are decoded (a client record's reason may quote a path).
  ASSERT_TRUE(parse_stats_record(R"({"source":"client","reason":"a \"b\" \u00e9"})", &kv));
  EXPECT_EQ(kv["reason"], "a \"b\" \xc3\xa9");
}

// One stats file holds the records of every node's forwarder: the node heads its record.
TEST(StatsFormat, NodeComesRightAfterTheSource) {
  Json kv;
  ASSERT_TRUE(parse_stats_record(R"({"source":"forwarder","node":"n2.vm","pid":7})", &kv));
  std::string t = format_stats_table(kv);
  EXPECT_EQ(t.rfind("  source                 forwarder\n  node                   n2.vm\n  pid", 0),
            0u)
      << t;
  EXPECT_EQ(t.find("node", t.find("n2.vm")), std::string::npos) << "shown once: " << t;
}

}  // namespace ckptfwd::cli
