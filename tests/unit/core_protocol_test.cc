// Wire protocol: payload encoding, frames over a real socket, numeric helpers.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "wire/protocol.h"

namespace ckptfwd {
namespace {

long rd(int fd, void* p, size_t n) { return ::read(fd, p, n); }
long wr(int fd, const void* p, size_t n) { return ::write(fd, p, n); }

TEST(Wire, EncodeDecodeRoundTrip) {
  const char* in[] = {"OPEN", "/ck/a b\tc", "577", "644", ""};
  char buf[256];
  size_t n = wire::encode(buf, sizeof(buf), in, 5);
  ASSERT_GT(n, 0u);
  wire::Fields f;
  ASSERT_TRUE(wire::decode(buf, n, f));
  ASSERT_EQ(f.n, 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_STREQ(f[i], in[i]);
  EXPECT_STREQ(f[9], "") << "out of range fields read as empty";
}

TEST(Wire, EncodeRefusesWhatDoesNotFit) {
  const char* in[] = {"STAT", "/a/very/long/path"};
  char buf[10];
  EXPECT_EQ(wire::encode(buf, sizeof(buf), in, 2), 0u);
}

TEST(Wire, DecodeRejectsTooManyFields) {
  std::string payload = "LIST";
  for (size_t i = 0; i < wire::kMaxFields; ++i) payload += std::string(1, '\0') + "x";
  std::vector<char> buf(payload.begin(), payload.end());
  buf.push_back(0);
  wire::Fields f;
  EXPECT_FALSE(wire::decode(buf.data(), payload.size(), f));
}

TEST(Wire, FramesTravelOverASocketAndOversizeIsAnError) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const char* in[] = {"STATS"};
  char buf[wire::kMaxFrame + 1];
  size_t n = wire::encode(buf, sizeof(buf), in, 1);
  ASSERT_TRUE(wire::send_frame(sv[0], buf, n, wr));
  char got[64];
  long r = wire::recv_frame(sv[1], got, sizeof(got), rd);
  ASSERT_EQ(r, 5);
  EXPECT_STREQ(got, "STATS");

  // A frame too large for the receiver's buffer is refused, not overrun.
  std::string big(100, 'x');
  ASSERT_TRUE(wire::send_frame(sv[0], big.data(), big.size(), wr));
  EXPECT_EQ(wire::recv_frame(sv[1], got, sizeof(got), rd), -1);
  EXPECT_FALSE(wire::send_frame(sv[0], buf, wire::kMaxFrame + 1, wr));

  // A header announcing more than kMaxFrame is a protocol error.
  close(sv[0]);
  close(sv[1]);
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  unsigned char hdr[4] = {0xff, 0xff, 0xff, 0x7f};
  ASSERT_EQ(write(sv[0], hdr, 4), 4);
  EXPECT_EQ(wire::recv_frame(sv[1], buf, sizeof(buf), rd), -1);
  // A peer that hangs up mid-frame gives -1.
  unsigned char partial[6] = {10, 0, 0, 0, 'a', 'b'};
  ASSERT_EQ(write(sv[0], partial, 6), 6);
  close(sv[0]);
  EXPECT_EQ(wire::recv_frame(sv[1], buf, sizeof(buf), rd), -1);
  close(sv[1]);
}

TEST(Wire, NumericHelpers) {
  long long i;
  unsigned long long u;
  unsigned o;
  EXPECT_TRUE(wire::parse_i64("-42", i));
  EXPECT_EQ(i, -42);
  EXPECT_TRUE(wire::parse_u64("18446744073709551615", u));
  EXPECT_EQ(u, 18446744073709551615ull);
  EXPECT_FALSE(wire::parse_u64("18446744073709551616", u));
  EXPECT_FALSE(wire::parse_u64("", u));
  EXPECT_FALSE(wire::parse_u64("12a", u));
  EXPECT_FALSE(wire::parse_i64("-", i));
  EXPECT_TRUE(wire::parse_octal("0644", o));
  EXPECT_EQ(o, 0644u);
  EXPECT_FALSE(wire::parse_octal("8", o));
  EXPECT_FALSE(wire::parse_octal("77777777777", o));
  char buf[32];
  EXPECT_STREQ(wire::fmt_i64(buf, -9223372036854775807LL - 1), "-9223372036854775808");
  EXPECT_STREQ(wire::fmt_i64(buf, 0), "0");
  EXPECT_STREQ(wire::fmt_octal(buf, 0755), "755");
  for (long long v : {0LL, 1LL, -1LL, 1234567890123LL, -9223372036854775807LL}) {
    ASSERT_TRUE(wire::parse_i64(wire::fmt_i64(buf, v), i));
    EXPECT_EQ(i, v);
  }
}

}  // namespace
}  // namespace ckptfwd
