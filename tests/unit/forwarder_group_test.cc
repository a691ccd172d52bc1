// The forwarder group (forwarder/group/): frames refuse hostile input, the owner table
// gives a path to its first claimer and frees a departed node's paths, the rendezvous
// directory keeps its secret private, and live groups agree on owners, refuse a peer
// without the secret, and elect a new leader when the old one stops.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "base/le_codec.h"
#include "forwarder/group/frame.h"
#include "forwarder/group/group.h"
#include "forwarder/group/messages.h"
#include "forwarder/group/owners.h"
#include "forwarder/group/rendezvous.h"
#include "forwarder/util/test_hooks.h"

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

// The owner a table answers ("" for nobody, "died" for a dead owner's path).
std::string owner_of(OwnerTable::Answer a) {
  if (a.died) return "died";
  return a.owner ? *a.owner : "";
}

TEST(GroupOwners, FirstClaimOwnsUntilItsNodeLeaves) {
  OwnerTable t;
  const auto now = OwnerTable::Clock::now();
  EXPECT_EQ(owner_of(t.claim("/c/f", "a", now)), "a");
  EXPECT_EQ(owner_of(t.claim("/c/f", "b", now)), "a") << "a second claim finds the first owner";
  EXPECT_EQ(owner_of(t.claim("/c/g", "b", now)), "b");
  EXPECT_EQ(owner_of(t.find("/c/f", now)), "a");
  EXPECT_EQ(owner_of(t.find("/c/h", now)), "");
  EXPECT_FALSE(t.adopt("/c/g", "a")) << "b owns it already";
  EXPECT_TRUE(t.adopt("/c/h", "a"));
  EXPECT_EQ(t.drop_node("a"), 2u);
  EXPECT_EQ(owner_of(t.find("/c/f", now)), "");
  EXPECT_EQ(owner_of(t.claim("/c/f", "b", now)), "b")
      << "a departed owner's path goes to the next claimer";
  EXPECT_EQ(t.size(), 2u);
}

TEST(GroupOwners, ADeadNodesPathsWaitForItsNextForwarderOrTheLimit) {
  OwnerTable t;
  const auto now = OwnerTable::Clock::now();
  const auto later = now + std::chrono::seconds(10);
  t.claim("/c/f", "a", now);
  t.claim("/c/g", "b", now);
  t.mark_died("a", later);
  EXPECT_EQ(owner_of(t.find("/c/f", now)), "died") << "its closed versions may come back";
  EXPECT_EQ(owner_of(t.claim("/c/f", "b", now)), "died") << "nobody else takes it meanwhile";
  EXPECT_EQ(owner_of(t.find("/c/g", now)), "b") << "other nodes' paths are answered";
  EXPECT_EQ(owner_of(t.claim("/c/new", "b", now)), "b");
  t.revive("a");
  EXPECT_EQ(owner_of(t.find("/c/f", now)), "a") << "its next forwarder answers for it";
  t.mark_died("a", now + std::chrono::milliseconds(1));
  EXPECT_EQ(owner_of(t.find("/c/f", now + std::chrono::milliseconds(2))), "")
      << "past the limit the store holds all there is";
  EXPECT_EQ(owner_of(t.claim("/c/f", "b", now)), "b");
  // A dead leader's node: every path the new leader does not know waits for it.
  t.suspect_unknown("a", later);
  EXPECT_EQ(owner_of(t.find("/c/unknown", now)), "died");
  EXPECT_EQ(owner_of(t.claim("/c/unknown", "b", now)), "died");
  EXPECT_EQ(owner_of(t.find("/c/g", now)), "b");
  EXPECT_TRUE(t.adopt("/c/a-kept", "a")) << "what its next forwarder recovered";
  t.revive("a");
  EXPECT_EQ(owner_of(t.find("/c/a-kept", now)), "a");
  EXPECT_EQ(owner_of(t.claim("/c/unknown", "b", now)), "b");
  t.suspect_unknown("a", now + std::chrono::milliseconds(1));
  EXPECT_EQ(owner_of(t.claim("/c/u2", "b", now + std::chrono::milliseconds(2))), "b");
}

TEST(GroupOwners, ARenameOntoAPathTakesItFromItsOwner) {
  OwnerTable t;
  const auto now = OwnerTable::Clock::now();
  std::string previous = "x";
  t.claim("/c/f", "a", now);
  ASSERT_TRUE(t.take("/c/f", "b", now, &previous));
  EXPECT_EQ(previous, "a") << "a must drop its versions";
  EXPECT_EQ(owner_of(t.find("/c/f", now)), "b");
  EXPECT_EQ(owner_of(t.claim("/c/f", "a", now)), "b") << "a's next open asks b";
  ASSERT_TRUE(t.take("/c/f", "b", now, &previous));
  EXPECT_EQ(previous, "") << "b owned it already";
  ASSERT_TRUE(t.take("/c/new", "b", now, &previous));
  EXPECT_EQ(previous, "");
  EXPECT_EQ(t.drop_node("a"), 0u) << "a owns nothing any more";
  EXPECT_EQ(t.drop_node("b"), 2u);
  // A dead owner's path is not taken while its closed versions may come back.
  t.claim("/c/g", "a", now);
  t.mark_died("a", now + std::chrono::seconds(10));
  EXPECT_FALSE(t.take("/c/g", "b", now, &previous));
  EXPECT_EQ(owner_of(t.find("/c/g", now)), "died");
}

TEST(GroupOwners, ADirectorysListingAsksTheLiveNodesOwningPathsThere) {
  OwnerTable t;
  const auto now = OwnerTable::Clock::now();
  t.claim("/c/d/f1", "a", now);
  t.claim("/c/d/f2", "b", now);
  t.claim("/c/e/f3", "c", now);
  t.claim("/c/d2", "d", now);  // "/c/d2" is not under "/c/d/"
  using V = std::vector<std::string>;
  EXPECT_EQ(t.nodes_under("/c/d/", "x"), (V{"a", "b"}));
  EXPECT_EQ(t.nodes_under("/c/d/", "a"), (V{"b"})) << "not the asker";
  EXPECT_EQ(t.nodes_under("/c/", "x"), (V{"a", "b", "c", "d"}));
  t.mark_died("b", now + std::chrono::seconds(10));
  EXPECT_EQ(t.nodes_under("/c/d/", "x"), (V{"a"})) << "a dead node answers nothing";
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

// As a distributed file system's client may show a directory another node just made:
// gone right after this client's mkdir, a few times. The group still forms (before, its
// forwarder formed none and wrote files shared across nodes through the store alone).
TEST_F(GroupDirTest, ADirectoryThatDoesNotShowAtOnceIsLookedForAgain) {
  int vanish = 3;
  test_hooks().after_rendezvous_mkdir = [&](const std::string& d) {
    if (vanish-- > 0) fs::remove_all(d);
  };
  Rendezvous a;
  std::string err;
  const bool opened = a.open(dir_, &err);
  clear_test_hooks();
  ASSERT_TRUE(opened) << err;
  EXPECT_EQ(a.secret().size(), 32u);
  Rendezvous b;
  ASSERT_TRUE(b.open(dir_, &err)) << err;
  EXPECT_EQ(a.secret(), b.secret());
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

TEST_F(GroupDirTest, EndedJobsDirectoriesAreSweptLiveOnesKept) {
  // dir(name, leader file, age in hours): a rendezvous directory as a job left it.
  auto dir = [&](const std::string& name, const std::string& leader, int hours) {
    const std::string d = root_ + "/.group-" + name;
    EXPECT_EQ(mkdir(d.c_str(), 0700), 0);
    const time_t t = time(nullptr) - hours * 3600;
    struct timeval tv[2] = {{t, 0}, {t, 0}};
    for (const char* f : {"secret", "leader.lock", "leader"}) {
      std::ofstream(d + "/" + f) << (std::string(f) == "leader" ? leader : "x");
      EXPECT_EQ(utimes((d + "/" + f).c_str(), tv), 0);
    }
    EXPECT_EQ(utimes(d.c_str(), tv), 0);
    return d;
  };
  const std::string retired = dir("retired", "na\t127.0.0.1:1\tretired\n", 2);
  const std::string with_dead = dir("dead", "na\t127.0.0.1:1\tretired\tnb\n", 2);
  const std::string recent = dir("recent", "na\t127.0.0.1:1\tretired\n", 0);
  const std::string killed = dir("killed", "na\t127.0.0.1:1\n", 8 * 24);
  const std::string running = dir("running", "na\t127.0.0.1:1\n", 8 * 24);
  const std::string long_job = dir("long", "na\t127.0.0.1:1\n", 8 * 24);
  const std::string keep = dir("keep", "na\t127.0.0.1:1\tretired\n", 8 * 24);
  // A long job between two leaders (nobody holds the lock for a moment): its leaders
  // touched the lock file (Rendezvous::touch).
  ASSERT_EQ(utimes((long_job + "/leader.lock").c_str(), nullptr), 0);
  // Its leader lives (and published long ago): it holds the lock.
  int lock = open((running + "/leader.lock").c_str(), O_RDWR);
  ASSERT_GE(lock, 0);
  struct flock fl {};
  fl.l_type = F_WRLCK;
  ASSERT_EQ(fcntl(lock, F_OFD_SETLK, &fl), 0);
  EXPECT_EQ(sweep_ended_jobs(root_, keep), 2u);
  close(lock);
  EXPECT_FALSE(fs::exists(retired)) << "left cleanly an hour ago";
  EXPECT_FALSE(fs::exists(killed)) << "nobody touched it for a week";
  EXPECT_TRUE(fs::exists(long_job)) << "its leader touched it a moment ago";
  EXPECT_TRUE(fs::exists(with_dead)) << "a dead node's forwarder may still come back";
  EXPECT_TRUE(fs::exists(recent)) << "the same job id may run another step";
  EXPECT_TRUE(fs::exists(running)) << "its leader holds the lock";
  EXPECT_TRUE(fs::exists(keep)) << "the sweeper's own";
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
  ASSERT_TRUE(a->start({dir_, "na", "127.0.0.1", {}}, &err)) << err;
  ASSERT_TRUE(a->claim("/c/a-only") && a->claim("/c/a-only")->self);  // a leads
  ASSERT_TRUE(b.start({dir_, "nb", "127.0.0.1", {}}, &err)) << err;
  ASSERT_TRUE(c.start({dir_, "nc", "127.0.0.1", {}}, &err)) << err;
  std::optional<Owner> o = b.claim("/c/shared");
  ASSERT_TRUE(o);
  EXPECT_TRUE(o->self);
  o = c.claim("/c/shared");
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->self);
  EXPECT_EQ(o->node, "nb");
  EXPECT_EQ(o->addr, b.addr());
  o = a->who("/c/shared");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->node, "nb");
  EXPECT_FALSE(c.who("/c/nobody's")) << "a path nobody claimed has no owner";
  // A peer connection with the secret works; the leader leaves: another member leads, and
  // the owners that are still members keep their paths (they tell the new leader).
  int fd = c.connect_peer(b.addr(), &err);
  ASSERT_GE(fd, 0) << err;
  c.release_peer(b.addr(), fd, false);
  a->leave();
  a.reset();
  o = c.claim("/c/shared");
  ASSERT_TRUE(o) << "no new leader";
  EXPECT_EQ(o->node, "nb");
  o = c.claim("/c/a-only");
  ASSERT_TRUE(o);
  EXPECT_TRUE(o->self) << "the departed leader's path goes to the next claimer";
}

TEST_F(GroupDirTest, ATakenPathIsAskedOfItsNewOwner) {
  NoPeerRequests h;
  Group a(h), b(h), c(h);
  std::string err;
  ASSERT_TRUE(a.start({dir_, "na", "127.0.0.1", {}}, &err)) << err;
  ASSERT_TRUE(a.claim("/c/lead"));  // a leads
  ASSERT_TRUE(b.start({dir_, "nb", "127.0.0.1", {}}, &err)) << err;
  ASSERT_TRUE(c.start({dir_, "nc", "127.0.0.1", {}}, &err)) << err;
  ASSERT_TRUE(b.claim("/c/f") && b.owns("/c/f"));
  std::optional<Owner> previous = c.take("/c/f");
  ASSERT_TRUE(previous);
  EXPECT_FALSE(previous->self);
  EXPECT_EQ(previous->node, "nb") << "the old owner, to drop its versions";
  EXPECT_EQ(previous->addr, b.addr());
  EXPECT_TRUE(c.owns("/c/f"));
  b.disown("/c/f");  // (what its SUPERSEDE does)
  std::optional<Owner> o = b.claim("/c/f");
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->self) << "b's next open stages a copy of c's version";
  EXPECT_EQ(o->node, "nc");
  previous = c.take("/c/f");
  ASSERT_TRUE(previous);
  EXPECT_TRUE(previous->self) << "taken twice: nobody else to tell";
  previous = a.take("/c/f");  // the leader's own take
  ASSERT_TRUE(previous);
  EXPECT_EQ(previous->node, "nc");
  // A listing of /c/ on c asks the nodes owning paths there: a (the leader) and b.
  ASSERT_TRUE(b.claim("/c/g") && b.owns("/c/g"));
  std::vector<Owner> there = c.owners_under("/c/");
  std::vector<std::string> nodes;
  for (const Owner& o : there) nodes.push_back(o.node + "@" + o.addr);
  EXPECT_EQ(nodes, (std::vector<std::string>{"na@" + a.addr(), "nb@" + b.addr()}));
  EXPECT_TRUE(a.owners_under("/c/").size() == 1 && a.owners_under("/c/")[0].node == "nb")
      << "the leader's own ask leaves itself out";
}

// Runs ask() in a thread, starts `next` (the dead node's next forwarder) after `after`,
// and returns what ask() answered and how long it took.
template <typename Ask>
std::pair<std::optional<Owner>, std::chrono::milliseconds> ask_while_it_comes_back(
    Ask ask, Group& next, const Group::Settings& s, std::chrono::milliseconds after) {
  const auto t0 = std::chrono::steady_clock::now();
  auto f = std::async(std::launch::async, ask);
  std::this_thread::sleep_for(after);
  std::string err;
  EXPECT_TRUE(next.start(s, &err)) << err;
  std::optional<Owner> o = f.get();
  return {o, std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now() - t0)};
}

TEST_F(GroupDirTest, ADeadMembersPathsWaitForItsNextForwarder) {
  NoPeerRequests h;
  Group a(h), c(h), b2(h);
  auto b = std::make_unique<Group>(h);
  std::string err;
  ASSERT_TRUE(a.start({dir_, "na", "127.0.0.1", {}}, &err)) << err;
  ASSERT_TRUE(a.claim("/c/a-only"));  // a leads
  ASSERT_TRUE(b->start({dir_, "nb", "127.0.0.1", {}}, &err)) << err;
  ASSERT_TRUE(c.start({dir_, "nc", "127.0.0.1", {}}, &err)) << err;
  ASSERT_TRUE(b->claim("/c/p") && b->owns("/c/p"));
  ASSERT_TRUE(b->claim("/c/q"));
  b.reset();                                                    // killed: no leave
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the leader sees it gone
  auto [o, took] =
      ask_while_it_comes_back([&] { return c.who("/c/p"); }, b2, {dir_, "nb", "127.0.0.1", {}},
                              std::chrono::milliseconds(400));
  ASSERT_TRUE(o) << "the dead owner's next forwarder answers for its path";
  EXPECT_EQ(o->node, "nb");
  EXPECT_EQ(o->addr, b2.addr());
  EXPECT_GE(took.count(), 350) << "answered before the node came back: the store's older bytes";
  // It leaves cleanly this time, and stops a while later (a forwarder's exit): its paths
  // are free at once, and stay free (it does not join again in between).
  ASSERT_TRUE(b2.claim("/c/r") && b2.owns("/c/r"));
  b2.leave();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  b2.stop();
  const auto t0 = std::chrono::steady_clock::now();
  for (const char* p : {"/c/q", "/c/r"}) {
    o = c.claim(p);
    ASSERT_TRUE(o);
    EXPECT_TRUE(o->self) << p << ": a node that left cleanly frees its paths";
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1500))
      << "its paths waited as a dead node's";
}

TEST_F(GroupDirTest, ADeadLeadersPathsWaitForItsNextForwarder) {
  NoPeerRequests h;
  Group b(h), a2(h);
  auto a = std::make_unique<Group>(h);
  std::string err;
  ASSERT_TRUE(a->start({dir_, "na", "127.0.0.1", {}}, &err)) << err;
  ASSERT_TRUE(a->claim("/c/a-only"));  // (a leads)
  ASSERT_TRUE(b.start({dir_, "nb", "127.0.0.1", {}}, &err)) << err;
  ASSERT_TRUE(b.claim("/c/b-only"));
  a.reset();  // killed: its table (and the paths it owned) gone with it
  // Its next forwarder recovered a version of /c/a-only (Settings::owned). It comes back
  // after the new leader's takeover grace: a waiting claim must not take the path between
  // the node's join and its adopt.
  auto [o, took] = ask_while_it_comes_back([&] { return b.claim("/c/a-only"); }, a2,
                                           {dir_, "na", "127.0.0.1", {"/c/a-only"}},
                                           std::chrono::milliseconds(2500));
  ASSERT_TRUE(o);
  EXPECT_FALSE(o->self) << "claimed while the dead leader's node could still have it";
  EXPECT_EQ(o->node, "na");
  EXPECT_GE(took.count(), 2400);
  o = b.claim("/c/new");
  ASSERT_TRUE(o);
  EXPECT_TRUE(o->self) << "once it is back, other paths are free again";
}

TEST_F(GroupDirTest, APeerWithoutTheSecretIsRefused) {
  NoPeerRequests h;
  Group a(h);
  std::string err;
  ASSERT_TRUE(a.start({dir_, "na", "127.0.0.1", {}}, &err)) << err;
  // Another job's member: its own rendezvous directory, its own secret.
  Group stranger(h);
  ASSERT_TRUE(stranger.start({root_ + "/.group-other", "nx", "127.0.0.1", {}}, &err)) << err;
  EXPECT_LT(stranger.connect_peer(a.addr(), &err), 0);
}

}  // namespace
}  // namespace ckptfwd::fwd::group
