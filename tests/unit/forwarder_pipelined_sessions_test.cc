// PipelinedSessions: a request waits while another pipelining session has bytes unread or
// a request it has not acted on; never for itself, never for a settled one.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include "forwarder/util/pipelined_sessions.h"

namespace ckptfwd::fwd {
namespace {

struct SocketPair {
  int fd[2] = {-1, -1};
  SocketPair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~SocketPair() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
};

TEST(PipelinedSessions, NobodyToWaitForReturnsAtOnce) {
  PipelinedSessions p;
  EXPECT_TRUE(p.await_others(nullptr, 0));
  SocketPair a;
  PipelinedSessions::Entry* e = p.join(a.fd[0]);
  ASSERT_EQ(write(a.fd[1], "x", 1), 1);
  EXPECT_TRUE(p.await_others(e, 0));  // its own unread bytes are its own business
  p.leave(e);
  EXPECT_EQ(p.size(), 0u);
  EXPECT_TRUE(p.await_others(nullptr, 0));
}

TEST(PipelinedSessions, UnreadBytesOfAnotherSessionAreWaitedFor) {
  PipelinedSessions p;
  SocketPair a, b;
  PipelinedSessions::Entry* ea = p.join(a.fd[0]);
  PipelinedSessions::Entry* eb = p.join(b.fd[0]);
  EXPECT_TRUE(p.await_others(eb, 0));
  ASSERT_EQ(write(a.fd[1], "OPEN", 4), 4);  // sent, not read yet
  EXPECT_FALSE(p.await_others(eb, 20));
  EXPECT_FALSE(p.await_others(nullptr, 20));
  char buf[4];
  PipelinedSessions::unsettle(ea);  // its thread raises the flag, then reads
  ASSERT_EQ(read(a.fd[0], buf, sizeof(buf)), 4);
  EXPECT_FALSE(p.await_others(eb, 20));  // read, not acted on
  PipelinedSessions::settle(ea);
  EXPECT_TRUE(p.await_others(eb, 20));
  p.leave(ea);
  p.leave(eb);
}

}  // namespace
}  // namespace ckptfwd::fwd
