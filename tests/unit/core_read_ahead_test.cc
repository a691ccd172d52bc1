// Replies read ahead (wire/read_ahead.h): frames queued on a socket come out one by one,
// with one read for all that were there, whatever the reads' boundaries.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "wire/read_ahead.h"

namespace ckptfwd {
namespace {

int g_reads = 0;
long counted_read(int fd, void* p, size_t n) {
  ++g_reads;
  return ::read(fd, p, n);
}

std::string frame(const std::string& payload) {
  std::string f(4, '\0');
  for (int i = 0; i < 4; ++i) f[i] = static_cast<char>((payload.size() >> (8 * i)) & 0xff);
  return f + payload;
}

std::vector<char> g_big;
char* grow(size_t n) {
  g_big.assign(n, 'x');
  return g_big.data();
}

class ReadAheadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv_), 0);
    g_reads = 0;
  }
  void TearDown() override {
    if (sv_[0] >= 0) close(sv_[0]);
    close(sv_[1]);
  }
  void put(const std::string& bytes) {
    ASSERT_EQ(write(sv_[0], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  // The next payload through ra, as a string; "<fail>" when take() fails.
  std::string take(wire::ReadAhead& ra, size_t limit = wire::kMaxReplyFrame) {
    char* payload = nullptr;
    size_t len = 0;
    if (!ra.take(sv_[1], counted_read, limit, out_, sizeof(out_), grow, &payload, &len))
      return "<fail>";
    EXPECT_EQ(payload[len], '\0');
    return std::string(payload, len);
  }
  int sv_[2] = {-1, -1};
  char out_[64];
};

TEST_F(ReadAheadTest, FramesQueuedTogetherComeOutOneByOneFromOneRead) {
  char buf[256];
  wire::ReadAhead ra(buf, sizeof(buf));
  put(frame(std::string("OK\0001", 4)) + frame(std::string("OK\0lease=7.-1.9", 15)) +
      frame(std::string("ERR\0005", 5)));
  EXPECT_EQ(take(ra), std::string("OK\0001", 4));
  EXPECT_TRUE(ra.has_frame());
  EXPECT_EQ(take(ra), std::string("OK\0lease=7.-1.9", 15));
  EXPECT_EQ(take(ra), std::string("ERR\0005", 5));
  EXPECT_EQ(g_reads, 1);
  EXPECT_TRUE(ra.empty());
  EXPECT_FALSE(ra.has_frame());
}

TEST_F(ReadAheadTest, AFrameCutAnywhereIsPutTogether) {
  char buf[16];  // smaller than two frames: the second is moved to the front
  wire::ReadAhead ra(buf, sizeof(buf));
  const std::string both = frame("first") + frame("second");
  put(both.substr(0, 2));
  std::string rest = both.substr(2);
  // The reader is fed the rest in pieces of 3 bytes while it waits.
  std::thread feeder([&] {
    for (size_t i = 0; i < rest.size(); i += 3) {
      usleep(2000);
      ASSERT_GT(write(sv_[0], rest.data() + i, std::min<size_t>(3, rest.size() - i)), 0);
    }
  });
  EXPECT_EQ(take(ra), "first");
  EXPECT_EQ(take(ra), "second");
  feeder.join();
  EXPECT_TRUE(ra.empty());
}

TEST_F(ReadAheadTest, AFrameLargerThanTheBuffersGoesToBig) {
  char buf[32];
  wire::ReadAhead ra(buf, sizeof(buf));
  const std::string large(1000, 'L'), mid(40, 'M');
  put(frame(large) + frame(mid) + frame("tail"));
  EXPECT_EQ(take(ra), large);  // larger than the read-ahead buffer and out_
  EXPECT_EQ(take(ra), mid);    // fits the buffer, not out_
  EXPECT_EQ(take(ra), "tail");
}

TEST_F(ReadAheadTest, OverTheLimitOrCutShortOrNowhereToPutItFails) {
  char buf[64];
  wire::ReadAhead ra(buf, sizeof(buf));
  put(frame(std::string(100, 'x')));
  EXPECT_EQ(take(ra, 99), "<fail>");
  ra.reset();
  char* payload = nullptr;
  size_t len = 0;
  EXPECT_FALSE(ra.take(sv_[1], counted_read, 1000, out_, sizeof(out_), nullptr, &payload, &len))
      << "a frame larger than out_ without big()";
  ra.reset();
  put(frame("whole") + std::string("\x0a\0\0\0ab", 6));
  close(sv_[0]);
  sv_[0] = -1;
  EXPECT_EQ(take(ra), "whole");
  EXPECT_EQ(take(ra), "<fail>");  // the peer hung up mid-frame
}

}  // namespace
}  // namespace ckptfwd
