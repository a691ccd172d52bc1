// The client's stats line (interpose/client/stats_line.h) must be a JSON object that a strict
// reader (nlohmann-json, as `ckptfwd stats --file` uses) accepts, whatever bytes the
// fallback reason holds, and keep the reason's text where it can.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "interpose/client/stats_line.h"

namespace ckptfwd::interpose {
namespace {

nlohmann::json parse_line(const char* reason, size_t cap = 640) {
  std::string buf(cap, '\0');
  size_t n = format_client_stats_line(buf.data(), cap, 42, 3, 2, reason);
  EXPECT_GT(n, 0u);
  EXPECT_LT(n, cap);
  std::string line(buf.data(), n);
  EXPECT_EQ(line.back(), '\n');
  return nlohmann::json::parse(line, nullptr, false);
}

TEST(ClientStatsLine, PlainReason) {
  nlohmann::json j = parse_line("forwarder unreachable (no socket)");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["source"], "client");
  EXPECT_EQ(j["pid"], 42);
  EXPECT_EQ(j["rank"], 3);
  EXPECT_EQ(j["fallbacks"], 2);
  EXPECT_EQ(j["reason"], "forwarder unreachable (no socket)");
}

TEST(ClientStatsLine, QuotesControlsAndUtf8) {
  nlohmann::json j =
      parse_line("\"a\\b\"\n\t/ckpt/\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["reason"], "\"a\\b\"  /ckpt/\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
}

TEST(ClientStatsLine, InvalidUtf8BecomesQuestionMarks) {
  // A lone continuation byte, a cut sequence, an overlong '/', a surrogate, 0xff.
  nlohmann::json j = parse_line(
      "a\x80"
      "b\xc3"
      "c\xc0\xaf"
      "d\xed\xa0\x80"
      "e\xff");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["reason"], "a?b?c??d???e?");
}

TEST(ClientStatsLine, LongReasonIsCutButStaysJson) {
  std::string reason(2000, 'x');
  reason += "\xc3\xa9";
  for (size_t cap : {128u, 300u, 641u}) {
    nlohmann::json j = parse_line(reason.c_str(), cap);
    ASSERT_FALSE(j.is_discarded()) << cap;
    EXPECT_GT(j["reason"].get<std::string>().size(), 10u);
  }
  // Cut in the middle of a two-byte character: it is left out whole.
  std::string tail(200, 'y');
  tail += "\xc3\xa9\xc3\xa9\xc3\xa9";
  for (size_t cap = 128; cap < 400; ++cap) {
    std::string buf(cap, '\0');
    size_t n = format_client_stats_line(buf.data(), cap, 1, 0, 1, tail.c_str());
    ASSERT_GT(n, 0u);
    ASSERT_FALSE(nlohmann::json::parse(std::string(buf.data(), n), nullptr, false).is_discarded())
        << cap;
  }
  char small[64];
  EXPECT_EQ(format_client_stats_line(small, sizeof(small), 1, 0, 1, "x"), 0u);
}

TEST(Utf8, SequenceLengths) {
  auto len = [](const char* s) {
    return utf8_sequence_length(reinterpret_cast<const unsigned char*>(s), strlen(s));
  };
  EXPECT_EQ(len("a"), 1u);
  EXPECT_EQ(len("\xc3\xa9"), 2u);
  EXPECT_EQ(len("\xe2\x82\xac"), 3u);
  EXPECT_EQ(len("\xf0\x9f\x98\x80"), 4u);
  EXPECT_EQ(len("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(len("\xe0\x80\xaf"), 0u);      // overlong
  EXPECT_EQ(len("\xc3"), 0u);              // cut
}

}  // namespace
}  // namespace ckptfwd::interpose
