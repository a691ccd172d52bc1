// The exec hand-over string (CKPTFWD_ADOPT): round trip, odd paths, and garbage that must
// be refused without reading past the end.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "interpose/track/adopt_codec.h"

using namespace ckptfwd::interpose;

namespace {

std::string encode(int sock, const std::string& path, int fd = 1, unsigned long long vid = 42,
                   long long budget = -1, unsigned mode = 0644) {
  char buf[8192];
  size_t n = format_adopt_head(buf, sizeof(buf), sock);
  EXPECT_GT(n, 0u);
  AdoptRecord r;
  r.fd = fd;
  r.vid = vid;
  r.budget = budget;
  r.mode = mode;
  r.path = path.data();
  r.path_len = path.size();
  size_t m = format_adopt_record(buf + n, sizeof(buf) - n, r);
  EXPECT_GT(m, 0u);
  return std::string(buf, n + m);
}

TEST(InterposeAdopt, RoundTrip) {
  std::string s = encode(900, "/ckpt/r0.bin", 1, 42, 1 << 20, 0600);
  int sock = -1;
  const char* p = parse_adopt_head(s.c_str(), sock);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(sock, 900);
  AdoptRecord r;
  p = parse_adopt_record(p, r);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, '\0');
  EXPECT_EQ(r.fd, 1);
  EXPECT_EQ(r.vid, 42u);
  EXPECT_EQ(r.budget, 1 << 20);
  EXPECT_EQ(r.mode, 0600u);
  EXPECT_EQ(std::string(r.path, r.path_len), "/ckpt/r0.bin");
}

TEST(InterposeAdopt, PathsWithSeparatorsSurvive) {
  std::string odd = "/c/a;b,c:d 1;";
  std::string s = encode(7, odd) + encode(7, "/c/second").substr(2);  // two records
  int sock;
  const char* p = parse_adopt_head(s.c_str(), sock);
  AdoptRecord r;
  ASSERT_NE(p = parse_adopt_record(p, r), nullptr);
  EXPECT_EQ(std::string(r.path, r.path_len), odd);
  ASSERT_NE(p = parse_adopt_record(p, r), nullptr);
  EXPECT_EQ(std::string(r.path, r.path_len), "/c/second");
  EXPECT_EQ(*p, '\0');
}

TEST(InterposeAdopt, GarbageIsRefused) {
  int sock;
  EXPECT_EQ(parse_adopt_head("", sock), nullptr);
  EXPECT_EQ(parse_adopt_head("x;", sock), nullptr);
  EXPECT_EQ(parse_adopt_head("-1;", sock), nullptr);
  EXPECT_EQ(parse_adopt_head("99999999999999999999;", sock), nullptr);
  EXPECT_EQ(parse_adopt_head(nullptr, sock), nullptr);
  AdoptRecord r;
  for (const char* bad : {"1,2,3,644,5:/abc;",       // path shorter than its length
                          "1,2,3,644,3:/abcd;",      // no ';' right after the path
                          "1,0,3,644,2:/a;",         // vid 0 is a read view, never handed over
                          "1,2,3,999,2:/a;",         // not octal
                          "-1,2,3,644,2:/a;",        // negative fd
                          "1,2,3,644,0:;",           // empty path
                          "1,2,3,644,99999999:/a;",  // absurd length
                          "1,2,3",                   // truncated
                          ""}) {
    EXPECT_EQ(parse_adopt_record(bad, r), nullptr) << bad;
  }
}

TEST(InterposeAdopt, FormatRefusesWhatDoesNotFit) {
  char small[16];
  AdoptRecord r;
  r.fd = 1;
  r.vid = 1;
  std::string p(64, 'a');
  r.path = p.data();
  r.path_len = p.size();
  EXPECT_EQ(format_adopt_record(small, sizeof(small), r), 0u);
  EXPECT_EQ(format_adopt_head(small, 2, 123456), 0u);
}

}  // namespace
