// Frames read with as few reads as it takes (forwarder/daemon/request_reader.h on the forwarder's
// side, wire::recv_reply on the library's): a frame split over several writes comes
// whole, two frames in one write come one by one in order, and a frame over the limit or
// a peer hanging up mid-frame ends the connection.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "forwarder/daemon/request_reader.h"
#include "wire/protocol.h"

namespace ckptfwd::fwd {
namespace {

std::string frame(const std::string& payload) {
  size_t n = payload.size();
  std::string f = {static_cast<char>(n), static_cast<char>(n >> 8), static_cast<char>(n >> 16),
                   static_cast<char>(n >> 24)};
  return f + payload;
}

class FramePair : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd_), 0); }
  void TearDown() override {
    for (int fd : fd_)
      if (fd >= 0) ::close(fd);
  }
  void send_raw(const std::string& bytes) {
    ASSERT_EQ(::write(fd_[0], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  }
  void hang_up() {
    ::close(fd_[0]);
    fd_[0] = -1;
  }
  std::string next(RequestReader& r) {
    char* p = nullptr;
    long n = r.next(fd_[1], &p);
    return n < 0 ? "<end>" : std::string(p, static_cast<size_t>(n));
  }
  int fd_[2] = {-1, -1};
};

TEST_F(FramePair, TwoRequestsInOneWriteComeOneByOneInOrder) {
  RequestReader r;
  send_raw(frame(std::string("OPEN\0/a\0"
                             "577\0"
                             "644",
                             16)) +
           frame("CLOSE") + frame(""));
  hang_up();  // what was read past the first frame must come from the reader, not the socket
  EXPECT_EQ(next(r), std::string("OPEN\0/a\0"
                                 "577\0"
                                 "644",
                                 16));
  EXPECT_TRUE(r.buffered()) << "the next request was read with this one";
  EXPECT_EQ(next(r), "CLOSE");
  EXPECT_EQ(next(r), "");
  EXPECT_FALSE(r.buffered());
  EXPECT_EQ(next(r), "<end>");
}

TEST_F(FramePair, AFrameInPiecesComesWhole) {
  RequestReader r;
  const size_t n = wire::kMaxFrame - 100;
  std::string f = frame(std::string(n, 'p')) + frame("next");
  // Header split, then the payload in two parts, the second carrying the next frame.
  send_raw(f.substr(0, 2));
  send_raw(f.substr(2, 30000));
  std::thread late([&] { send_raw(f.substr(30002)); });
  std::string got = next(r);
  late.join();
  EXPECT_EQ(got.size(), n);
  EXPECT_EQ(got, std::string(n, 'p'));
  EXPECT_EQ(next(r), "next");
}

TEST_F(FramePair, AFrameOverTheLimitOrCutShortEndsTheConnection) {
  RequestReader over;
  send_raw(frame(std::string(wire::kMaxFrame + 1, 'x')).substr(0, 4));
  EXPECT_EQ(next(over), "<end>");
  RequestReader cut;
  send_raw(frame("whole frame").substr(0, 7));
  hang_up();
  EXPECT_EQ(next(cut), "<end>");
}

long read_fn(int fd, void* p, size_t n) { return ::read(fd, p, n); }
char* g_big = nullptr;
char* grow(size_t n) { return g_big = static_cast<char*>(malloc(n)); }
char* refuse(size_t) { return nullptr; }

TEST_F(FramePair, AReplyComesInOneBufferOrABiggerOneAndNothingMayFollowIt) {
  char buf[64];
  char* payload = nullptr;
  size_t len = 0;
  send_raw(
      frame(std::string("OK\0"
                        "17",
                        5)));
  ASSERT_TRUE(wire::recv_reply(fd_[1], buf, sizeof(buf), read_fn, refuse, &payload, &len));
  EXPECT_EQ(std::string(payload, len), std::string("OK\0"
                                                   "17",
                                                   5));
  EXPECT_EQ(payload, buf + 4) << "a small reply stays in the caller's buffer";
  // Larger than the buffer: the rest goes into what grow gives, the first bytes with it.
  std::string big(1000, 'L');
  send_raw(frame(big));
  ASSERT_TRUE(wire::recv_reply(fd_[1], buf, sizeof(buf), read_fn, grow, &payload, &len));
  EXPECT_EQ(std::string(payload, len), big);
  EXPECT_EQ(payload, g_big);
  free(g_big);
  send_raw(frame(big));
  EXPECT_FALSE(wire::recv_reply(fd_[1], buf, sizeof(buf), read_fn, refuse, &payload, &len));
  // A reply followed by more bytes: the stream is out of step.
  int fresh[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fresh), 0);
  std::string two = frame("OK") + frame("OK");
  ASSERT_EQ(::write(fresh[0], two.data(), two.size()), static_cast<ssize_t>(two.size()));
  EXPECT_FALSE(wire::recv_reply(fresh[1], buf, sizeof(buf), read_fn, refuse, &payload, &len));
  ::close(fresh[0]);
  ::close(fresh[1]);
}

}  // namespace
}  // namespace ckptfwd::fwd
