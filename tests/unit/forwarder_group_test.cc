// The forwarder group (forwarder/group/): frames refuse hostile input, the owner table
// gives a path to its first claimer and frees a departed node's paths, the rendezvous
// directory keeps its secret private, and live groups agree on owners, refuse a peer
// without the secret, and elect a new leader when the old one stops.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "base/le_codec.h"
#include "forwarder/group/frame.h"
#include "forwarder/group/group.h"
#include "forwarder/group/messages.h"
#include "forwarder/group/owners.h"
#include "forwarder/group/rendezvous.h"

namespace ckptfwd::fwd::group {
namespace {

namespace fs = std::filesystem;

struct SocketPair {
  int fd[2] = {-1, -1};
  SocketPair() { socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd); }
  ~SocketPair() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
};

TEST(GroupFrame, RoundTripWithFileRanges) {
  SocketPair sp;
  char tmpl[] = "/tmp/ckfwd-frame-XXXXXX";
  int file = mkstemp(tmpl);
  ASSERT_GE(file, 0);
  ASSERT_EQ(write(file, "0123456789", 10), 10);
  std::string err;
  Frame f{{"MERGE", "7", ""}, "head"};
  ASSERT_TRUE(send_frame(sp.fd[0], f, &err, file, {{2, 3}, {8, 2}})) << err;
  Frame got;
  uint64_t len = 0;
  ASSERT_TRUE(recv_head(sp.fd[1], got, &len, &err)) << err;
  EXPECT_EQ(got.fields, f.fields);
  ASSERT_EQ(len, 9u);
  std::string body;
  ASSERT_TRUE(recv_body(sp.fd[1], len, body, 100, &err)) << err;
  EXPECT_EQ(body, "head23489");
  close(file);
  unlink(tmpl);
}

// A frame head's bytes: magic, field lengths (with that many 'x'), body length.
std::vector<uint8_t> head_bytes(uint32_t magic, const std::vector<uint32_t>& fields, uint64_t body,
                                uint32_t count_override = UINT32_MAX) {
  LeEncoder e;
  e.u32(magic);
  e.u32(count_override == UINT32_MAX ? static_cast<uint32_t>(fields.size()) : count_override);
  for (uint32_t n : fields) {
    e.u32(n);
    for (uint32_t i = 0; i < n && i < 100; ++i) e.u8('x');
  }
  e.u64(body);
  return e.buf;
}

bool head_refused(const std::vector<uint8_t>& bytes, std::string* err) {
  SocketPair sp;
  EXPECT_EQ(write(sp.fd[0], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  shutdown(sp.fd[0], SHUT_WR);
  Frame f;
  uint64_t len = 0;
  return !recv_head(sp.fd[1], f, &len, err);
}

TEST(GroupFrame, RefusesHostileHeads) {
  std::string err;
  EXPECT_FALSE(head_refused(head_bytes(kFrameMagic, {3, 0}, 5), &err)) << err;
  EXPECT_TRUE(head_refused(head_bytes(0x12345678, {3}, 0), &err));
  EXPECT_NE(err.find("not a ckptfwd group frame"), std::string::npos) << err;
  EXPECT_TRUE(head_refused(head_bytes(kFrameMagic, {}, 0, kMaxFields + 1), &err));
  EXPECT_NE(err.find("too many fields"), std::string::npos) << err;
  EXPECT_TRUE(head_refused(head_bytes(kFrameMagic, {kMaxFieldBytes + 1}, 0), &err));
  EXPECT_NE(err.find("too long"), std::string::npos) << err;
  EXPECT_TRUE(head_refused(head_bytes(kFrameMagic, {2}, kMaxBodyBytes + 1), &err));
  EXPECT_NE(err.find("body is too long"), std::string::npos) << err;
  // Cut anywhere: a closed connection, never a hang or a half-filled frame taken.
  std::vector<uint8_t> whole = head_bytes(kFrameMagic, {3, 4}, 0);
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    std::vector<uint8_t> part(whole.begin(), whole.begin() + static_cast<long>(cut));
    EXPECT_TRUE(head_refused(part, &err)) << "cut at " << cut;
  }
}

TEST(GroupFrame, BodyAboveTheCallersLimitIsRefused) {
  SocketPair sp;
  std::string err;
  ASSERT_TRUE(send_frame(sp.fd[0], Frame{{"X"}, std::string(100, 'b')}, &err));
  Frame f;
  EXPECT_FALSE(recv_frame(sp.fd[1], f, 99, &err));
  EXPECT_NE(err.find("larger than"), std::string::npos) << err;
}

TEST(GroupMessages, RecordsAndExtentsRoundTripAndRefuseWhatDoesNotFit) {
  RecordFields rs = {{"unlink", "/c/a"}, {}, {"rename", "/c/b", std::string("x\0y", 3)}};
  std::string body = encode_records(rs);
  RecordFields got;
  ASSERT_TRUE(decode_records(body, 3, got));
  EXPECT_EQ(got, rs);
  EXPECT_FALSE(decode_records(body, 2, got)) << "bytes left over";
  EXPECT_FALSE(decode_records(body, 4, got)) << "a record missing";
  EXPECT_FALSE(decode_records(body.substr(0, body.size() - 1), 3, got)) << "a field cut";
  LeEncoder huge;
  huge.u32(0xffffffffu);  // a field count the body cannot hold
  EXPECT_FALSE(decode_records(std::string(huge.buf.begin(), huge.buf.end()), 1, got));

  ExtentPairs ext = {{0, 4}, {10, 12}};
  std::string pairs = encode_extents(ext);
  ExtentPairs back;
  uint64_t bytes = 0;
  ASSERT_TRUE(decode_extents(pairs, 2, 100, back, &bytes));
  EXPECT_EQ(back, ext);
  EXPECT_EQ(bytes, 6u);
  EXPECT_FALSE(decode_extents(pairs, 3, 100, back, &bytes)) << "more extents than bytes";
  EXPECT_FALSE(decode_extents(pairs, 2, 11, back, &bytes)) << "an end past the limit";
  EXPECT_FALSE(decode_extents(encode_extents({{5, 5}}), 1, 100, back, &bytes)) << "empty";
}

TEST(GroupOwners, FirstClaimOwnsUntilItsNodeLeaves) {
  OwnerTable t;
  EXPECT_EQ(t.claim("/c/f", "a"), "a");
  EXPECT_EQ(t.claim("/c/f", "b"), "a") << "a second node's claim finds the first owner";
  EXPECT_EQ(t.claim("/c/g", "b"), "b");
  ASSERT_NE(t.find("/c/f"), nullptr);
  EXPECT_EQ(t.find("/c/h"), nullptr);
  EXPECT_FALSE(t.adopt("/c/g", "a")) << "b owns it already";
  EXPECT_TRUE(t.adopt("/c/h", "a"));
  EXPECT_EQ(t.drop_node("a"), 2u);
  EXPECT_EQ(t.find("/c/f"), nullptr);
  EXPECT_EQ(t.claim("/c/f", "b"), "b") << "a departed owner's path goes to the next claimer";
  EXPECT_EQ(t.size(), 2u);
}

class GroupDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ckfwd-group-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/.group-job";
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string root_, dir_;
};

TEST_F(GroupDirTest, SecretIsSharedAndPrivate) {
  Rendezvous a, b;
  std::string err;
  ASSERT_TRUE(a.open(dir_, &err)) << err;
  ASSERT_TRUE(b.open(dir_, &err)) << err;
  EXPECT_EQ(a.secret().size(), 32u);
  EXPECT_EQ(a.secret(), b.secret()) << "every member reads the one secret of the job";
  struct stat st;
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat((dir_ + "/secret").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  Rendezvous c;
  EXPECT_FALSE(c.open(dir_, &err)) << "a directory others may read keeps no secret";
  EXPECT_NE(err.find("others may read"), std::string::npos) << err;
}

TEST_F(GroupDirTest, OneLeaderAtATime) {
  Rendezvous a, b;
  std::string err;
  ASSERT_TRUE(a.open(dir_, &err) && b.open(dir_, &err)) << err;
  EXPECT_TRUE(a.try_lead(&err)) << err;
  EXPECT_FALSE(b.try_lead(&err));
  EXPECT_TRUE(err.empty()) << "held by another: no error, " << err;
  ASSERT_TRUE(a.publish("na", "127.0.0.1:5", &err)) << err;
  std::string node, addr;
  ASSERT_TRUE(b.read_leader(&node, &addr));
  EXPECT_EQ(node, "na");
  EXPECT_EQ(addr, "127.0.0.1:5");
}

// A member that answers nothing (the tests here exercise membership and ownership).
class NoPeerRequests : public PeerHandler {
 public:
  bool serve_peer(const std::string&, int sock, const Frame&, uint64_t body_len) override {
    std::string err;
    return skip_body(sock, body_len, &err) && send_frame(sock, Frame{{"OK"}, {}}, &err);
  }
  void peer_gone(const std::string&) override {}
};

TEST_F(GroupDirTest, MembersAgreeOnOwnersAndALeaderTakesOver) {
  NoPeerRequests h;
  auto a = std::make_unique<Group>(h);
  Group b(h), c(h);
  std::string err;
  ASSERT_TRUE(a->start({dir_, "na", "127.0.0.1"}, &err)) << err;
  ASSERT_TRUE(b.start({dir_, "nb", "127.0.0.1"}, &err)) << err;
  ASSERT_TRUE(c.start({dir_, "nc", "127.0.0.1"}, &err)) << err;
  std::optional<Owner> o = b.claim("/c/shared");
  ASSERT_TRUE(o);
  EXPECT_TRUE(o->self);
  o = c.claim("/c/shared");
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->self);
  EXPECT_EQ(o->node, "nb");
  EXPECT_EQ(o->addr, b.addr());
  ASSERT_TRUE(a->claim("/c/a-only") && a->claim("/c/a-only")->self);  // (a has joined)
  o = a->who("/c/shared");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->node, "nb");
  EXPECT_FALSE(c.who("/c/nobody's")) << "a path nobody claimed has no owner";
  // A peer connection with the secret works; the leader stops: another member leads, and
  // the owners that are still members keep their paths (they tell the new leader).
  int fd = c.connect_peer(b.addr(), &err);
  ASSERT_GE(fd, 0) << err;
  c.release_peer(b.addr(), fd, false);
  a.reset();
  o = c.claim("/c/shared");
  ASSERT_TRUE(o) << "no new leader";
  EXPECT_EQ(o->node, "nb");
  o = c.claim("/c/a-only");
  ASSERT_TRUE(o);
  EXPECT_TRUE(o->self) << "the departed leader's path goes to the next claimer";
}

TEST_F(GroupDirTest, APeerWithoutTheSecretIsRefused) {
  NoPeerRequests h;
  Group a(h);
  std::string err;
  ASSERT_TRUE(a.start({dir_, "na", "127.0.0.1"}, &err)) << err;
  // Another job's member: its own rendezvous directory, its own secret.
  Group stranger(h);
  ASSERT_TRUE(stranger.start({root_ + "/.group-other", "nx", "127.0.0.1"}, &err)) << err;
  EXPECT_LT(stranger.connect_peer(a.addr(), &err), 0);
}

}  // namespace
}  // namespace ckptfwd::fwd::group
