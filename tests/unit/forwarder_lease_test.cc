// Leased opens (wire/lease.h) as the forwarder serves them: the lease a CLOSE hands over,
// the OPEN that uses it without waiting, what a wrong one gets, the files of an unused one,
// and the order other sessions see (pipelined_sessions.h).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "common/lease_journal.h"
#include "forwarder/staging/staging.h"
#include "forwarder/util/test_hooks.h"
#include "forwarder_test_util.h"
#include "wire/fate.h"
#include "wire/lease.h"

namespace ckptfwd::fwd::test {
namespace {

class LeaseTest : public ForwarderTest {
 protected:
  // A client that asks for leases, as the library does for a process that is not an MPI
  // rank.
  std::unique_ptr<Client> leasing_client() {
    auto c = client();
    EXPECT_EQ(c->call({"HELLO", std::to_string(getpid()), "-1", wire::kLeasePrefix})[0], "OK");
    return c;
  }

  // The lease at the end of reply r (vid 0: none).
  static wire::Lease lease_of(const std::vector<std::string>& r) {
    wire::Lease l;
    if (!r.empty()) wire::parse_lease(r.back().c_str(), l);
    return l;
  }

  std::string staged(uint64_t vid, const char* ext = "data") const {
    char name[PATH_MAX];
    return staged_file(paths_.dir, vid, ext, name, sizeof(name)) ? name : "";
  }

  // What the library does before a leased OPEN: the forwarder's claim linked under the
  // path's fate name.
  bool claim(const wire::Lease& l, const std::string& path) const {
    char from[PATH_MAX], to[PATH_MAX];
    return fate::claim_file(paths_.dir, static_cast<long>(l.pid), from, sizeof(from)) &&
           fate::fate_file(paths_.dir, path.c_str(), to, sizeof(to)) && ::link(from, to) == 0;
  }

  bool fate_exists(const std::string& path) const {
    char name[PATH_MAX];
    struct stat st;
    return fate::fate_file(paths_.dir, path.c_str(), name, sizeof(name)) && ::lstat(name, &st) == 0;
  }

  static void append(const std::string& file, const std::string& bytes) {
    int fd = ::open(file.c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(fd, 0) << file;
    ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    ::close(fd);
  }

  // The forwarder started, and a leasing client holding the lease its first file's CLOSE
  // handed over (in l).
  std::unique_ptr<Client> start_with_lease(wire::Lease& l) {
    start();
    auto c = leasing_client();
    l = first_lease(*c);
    EXPECT_NE(l.vid, 0u);
    return c;
  }

  // A first file written the usual way: its CLOSE's reply hands a lease over.
  wire::Lease first_lease(Client& c) {
    auto r =
        c.call({"OPEN", data_ + "/first", std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
    EXPECT_EQ(r[0], "OK");
    EXPECT_EQ(lease_of(r).vid, 0u);  // (made after this reply)
    auto closed = c.call({"CLOSE", r[1], "0"});
    EXPECT_EQ(closed[0], "OK");
    return lease_of(closed);
  }

  // The OPEN field that uses lease l ("lease=<vid>").
  static std::string use_of(const wire::Lease& l) {
    char use[48];
    return wire::format_lease_use(l.vid, use, sizeof(use)) ? use : "";
  }

  const std::string trunc_ = std::to_string(O_WRONLY | O_CREAT | O_TRUNC);
};

TEST_F(LeaseTest, ACloseHandsALeaseAndALeasedOpenMakesTheVersionInItsFile) {
  wire::Lease l;
  auto c = start_with_lease(l);
  ASSERT_NE(l.vid, 0u);
  EXPECT_EQ(l.pid, static_cast<long long>(getpid()));  // (the forwarder runs in this process)
  struct stat st;
  ASSERT_EQ(::stat(staged(l.vid).c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);
  // No description yet: "lease" in the journal (a recovery leaves the files to the
  // client), and no .meta.
  EXPECT_EQ(journal_descriptions(std::string(paths_.dir))[l.vid], wire::kLeaseMeta);
  EXPECT_NE(::stat(staged(l.vid, "meta").c_str(), &st), 0);

  const std::string path = data_ + "/leased.bin";
  ASSERT_TRUE(claim(l, path));
  const std::string use = use_of(l);
  ASSERT_TRUE(c->send({"OPEN", path, trunc_, "644", use}));
  append(staged(l.vid), "written before the OPEN was answered");  // as the application does
  auto opened = c->receive();
  ASSERT_EQ(opened[0], "OK");
  EXPECT_EQ(opened[1], std::to_string(l.vid));
  EXPECT_EQ(opened[2], staged(l.vid));
  EXPECT_EQ(opened[4], "x");  // a new file
  wire::Lease next = lease_of(opened);
  EXPECT_NE(next.vid, 0u);  // the next one, made after the last CLOSE
  EXPECT_NE(next.vid, l.vid);
  EXPECT_EQ(c->call({"CLOSE", opened[1], "36", "whole=36"})[0], "OK");
  // Described at its CLOSE, in the journal.
  VersionMeta m;
  ASSERT_TRUE(parse_meta(journal_descriptions(std::string(paths_.dir))[l.vid], m));
  EXPECT_EQ(m.path, path);
  EXPECT_TRUE(m.closed);
  EXPECT_NE(::stat(staged(l.vid, "meta").c_str(), &st), 0);

  auto reader = client();
  EXPECT_EQ(reader->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(read_through(*reader, path), "written before the OPEN was answered");
  EXPECT_FALSE(fate_exists(path));  // its claim went with its last writer
}

// The replies to requests that arrive together (a leased OPEN and the CLOSE after it, sent
// without waiting) go out in one write: the library reads them in one read.
TEST_F(LeaseTest, RepliesToRequestsQueuedTogetherGoOutInOneWrite) {
  wire::Lease l;
  auto c = start_with_lease(l);
  ASSERT_NE(l.vid, 0u);
  std::mutex mu;
  std::vector<int> writes;
  test_hooks().at_reply_write = [&](int n) {
    std::lock_guard lk(mu);
    writes.push_back(n);
  };
  const std::string path = data_ + "/together.bin";
  ASSERT_TRUE(claim(l, path));
  const std::string use = use_of(l);
  const std::string vid = std::to_string(l.vid);
  ASSERT_TRUE(c->send_together({{"OPEN", path, trunc_, "644", use}, {"CLOSE", vid, "0"}}));
  auto opened = c->receive();
  EXPECT_EQ(opened[0], "OK");
  EXPECT_EQ(opened[1], vid);
  EXPECT_EQ(c->receive()[0], "OK");
  EXPECT_EQ(c->call({"STAT", path})[0], "OK");  // alone: a write of its own
  test_hooks().at_reply_write = nullptr;
  std::lock_guard lk(mu);
  EXPECT_EQ(writes, (std::vector<int>{2, 1}));
}

// A CLOSE whose description the journal cannot take yet (staging full) is answered all
// the same, with no new lease; the description is written once the journal can be.
TEST_F(LeaseTest, ACloseTheJournalCannotTakeYetIsAnsweredWithoutANewLease) {
  wire::Lease l;
  auto c = start_with_lease(l);
  ASSERT_NE(l.vid, 0u);
  const std::string path = data_ + "/full.bin";
  ASSERT_TRUE(claim(l, path));
  const std::string use = use_of(l);
  std::atomic<bool> full{true};
  test_hooks().fail_journal_write = [&] { return full.load(); };
  const std::string vid = std::to_string(l.vid);
  ASSERT_TRUE(c->send_together({{"OPEN", path, trunc_, "644", use}, {"CLOSE", vid, "0"}}));
  EXPECT_EQ(c->receive()[0], "OK");
  auto closed = c->receive();
  EXPECT_EQ(closed[0], "OK");
  EXPECT_EQ(lease_of(closed).vid, 0u);  // none while the journal cannot be written
  EXPECT_EQ(journal_descriptions(std::string(paths_.dir))[l.vid], wire::kLeaseMeta);
  full = false;
  EXPECT_EQ(c->call({"STAT", path})[0], "OK");  // (its reply's flush writes what waited)
  auto d = journal_descriptions(std::string(paths_.dir));
  if (d.count(l.vid)) {  // (else committed meanwhile: gone)
    VersionMeta m;
    ASSERT_TRUE(parse_meta(d[l.vid], m));
    EXPECT_TRUE(m.closed);
  }
  test_hooks().fail_journal_write = nullptr;
  EXPECT_EQ(c->call({"DRAIN"})[0], "OK");
}

TEST_F(LeaseTest, AClientThatDoesNotAskGetsNoLease) {
  start();
  auto c = client();
  EXPECT_EQ(c->call({"HELLO", std::to_string(getpid()), "3"})[0], "OK");
  EXPECT_EQ(first_lease(*c).vid, 0u);
  auto r = c->call({"OPEN", data_ + "/second", trunc_, "644"});
  ASSERT_EQ(r[0], "OK");
  EXPECT_EQ(lease_of(r).vid, 0u);
}

TEST_F(LeaseTest, ALeaseOfAnotherConnectionIsRefusedAndItsCloseFindsNoVersion) {
  wire::Lease l;
  auto owner = start_with_lease(l);
  ASSERT_NE(l.vid, 0u);
  auto thief = leasing_client();
  const std::string path = data_ + "/stolen.bin";
  ASSERT_TRUE(claim(l, path));
  const std::string use = use_of(l);
  auto r = thief->call({"OPEN", path, trunc_, "644", use});
  ASSERT_EQ(r[0], "ERR");
  EXPECT_EQ(r[1], std::to_string(EINVAL));
  // The library then falls back to the real path at the CLOSE, which needs the claim gone.
  EXPECT_FALSE(fate_exists(path));
  auto closed = thief->call({"CLOSE", std::to_string(l.vid), "0"});
  ASSERT_EQ(closed[0], "ERR");
  EXPECT_EQ(closed[1], std::to_string(ESTALE));
  // An OPEN without O_TRUNC is no leased one either, even on its own connection.
  ASSERT_TRUE(claim(l, path));
  r = owner->call({"OPEN", path, std::to_string(O_WRONLY), "644", use});
  EXPECT_EQ(r[0], "ERR");
}

TEST_F(LeaseTest, AnUnusedLeaseGoesWithItsConnection) {
  start();
  wire::Lease l;
  {
    auto c = leasing_client();
    l = first_lease(*c);
    ASSERT_NE(l.vid, 0u);
  }
  struct stat st;
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    gone = ::stat(staged(l.vid).c_str(), &st) != 0 &&
           !journal_descriptions(std::string(paths_.dir)).count(l.vid);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << staged(l.vid);
}

// Another process acts on the path right after the leased open returned: its request is
// answered after the leased OPEN, which its session had not acted on yet.
TEST_F(LeaseTest, AnotherSessionsRequestWaitsForALeasedOpenSentBeforeIt) {
  wire::Lease l;
  auto writer = start_with_lease(l);
  ASSERT_NE(l.vid, 0u);
  const std::string path = data_ + "/ordered.bin";
  std::atomic<bool> stat_arrived{false};
  test_hooks().at_request = [&](const std::string& verb) {
    if (verb == "STAT") stat_arrived = true;
  };
  // The leased OPEN is held until the other session's STAT reached the forwarder.
  test_hooks().before_leased_open = [&] {
    for (int i = 0; i < 5000 && !stat_arrived; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  ASSERT_TRUE(claim(l, path));
  const std::string use = use_of(l);
  ASSERT_TRUE(writer->send({"OPEN", path, trunc_, "644", use}));
  auto reader = client();
  auto st = reader->call({"STAT", path});
  EXPECT_TRUE(stat_arrived);
  // Without the wait the STAT finds no such file (PASS: the real path's answer).
  ASSERT_EQ(st[0], "OK") << (st.size() > 1 ? st[1] : "");
  EXPECT_EQ(st[1], "0");
  EXPECT_EQ(writer->receive()[0], "OK");
  EXPECT_EQ(writer->call({"CLOSE", std::to_string(l.vid), "0"})[0], "OK");
}

// A leased version's vid is taken before its open: after a crash, the versions of a path
// are ordered by when they were opened (the .meta's opened=), not by vid.
TEST_F(LeaseTest, ARecoveryOrdersAPathsVersionsByTheirOpenNotTheirVid) {
  fs::create_directories(paths_.dir);
  chmod(paths_.dir, 0700);
  const std::string p = data_ + "/x.bin";
  std::string err;
  auto closed = [&](uint64_t vid, const std::string& bytes, int64_t opened) {
    write_file(staged(vid), bytes);
    VersionMeta m{p, -1, 0644, 1};
    m.closed = true;
    m.closer = 1;
    m.opened_ns = opened;
    ASSERT_TRUE(write_meta(staged(vid, "meta"), m, &err)) << err;
  };
  closed(2, "NEW: leased, vid taken first, opened last", 2000);
  closed(5, "OLD", 1000);
  start();
  auto c = client();
  EXPECT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(read_through(*c, p), "NEW: leased, vid taken first, opened last");
}

// A lease whose version was never closed (the forwarder died first): a recovery leaves its
// files for the client, which writes the real path from them at its close.
TEST_F(LeaseTest, ARecoveryLeavesALeasesFilesToItsClient) {
  fs::create_directories(paths_.dir);
  chmod(paths_.dir, 0700);
  write_file(staged(9), "written on a lease");
  write_file(staged(9, "meta"), wire::kLeaseMeta);
  start();
  auto c = client();
  EXPECT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(read_file(staged(9)), "written on a lease");
  EXPECT_EQ(read_file(staged(9, "meta")), wire::kLeaseMeta);
  // Its vid is not handed out again.
  auto r = c->call({"OPEN", data_ + "/n", std::to_string(O_WRONLY | O_CREAT), "644"});
  ASSERT_EQ(r[0], "OK");
  EXPECT_GT(std::stoull(r[1]), 9u);
}

// The journal's descriptions after a crash: a closed version is committed, a lease is
// left to its client, a gone version's data file is removed; the journal then goes, and
// the next lease's vid is above them all.
TEST_F(LeaseTest, ARecoveryTakesTheLeasedVersionsFromTheJournal) {
  fs::create_directories(paths_.dir);
  chmod(paths_.dir, 0700);
  const std::string p = data_ + "/journaled.bin";
  VersionMeta m{p, -1, 0640, 1};
  m.closed = true;
  m.closer = 1;
  write_file(staged(4), "closed on a lease, then the forwarder died");
  write_file(staged(6), "written on a lease not closed yet");
  write_file(staged(7), "committed, its data file still there");
  write_file(staged(4, "meta"), "");  // made, never written (a recovery killed meanwhile)
  write_file(std::string(paths_.dir) + "/" + journal_file_name(3),
             journal_description(4, wire::kLeaseMeta) + journal_description(6, wire::kLeaseMeta) +
                 journal_description(7, format_meta(m)) + journal_description(4, format_meta(m)) +
                 journal_gone(7) + "M 9 40\npath=/cut short");
  start();
  auto c = client();
  EXPECT_EQ(c->call({"DRAIN"})[0], "OK");
  EXPECT_EQ(read_through(*c, p), "closed on a lease, then the forwarder died");
  EXPECT_EQ(read_file(staged(6)), "written on a lease not closed yet");
  EXPECT_EQ(read_file(staged(6, "meta")), wire::kLeaseMeta);
  struct stat st;
  EXPECT_NE(::stat(staged(7).c_str(), &st), 0);
  EXPECT_TRUE(journal_files(std::string(paths_.dir)).empty() ||
              journal_descriptions(std::string(paths_.dir)).count(4) == 0);
  auto lc = leasing_client();
  wire::Lease l = first_lease(*lc);
  EXPECT_GT(l.vid, 7u);
}

// An open version renamed keeps its fate claim under its new name: a leased open of that
// name fails to claim it and joins the version through the usual OPEN.
TEST_F(LeaseTest, ARenamedOpenVersionHoldsTheClaimOfItsNewName) {
  wire::Lease l;
  auto c = start_with_lease(l);
  ASSERT_NE(l.vid, 0u);
  const std::string tmp = data_ + "/tmp", to = data_ + "/X";
  auto r = c->call({"OPEN", tmp, trunc_, "644"});
  ASSERT_EQ(r[0], "OK");
  ASSERT_EQ(c->call({"RENAME", tmp, to})[0], "OK");
  EXPECT_TRUE(fate_exists(to));
  EXPECT_FALSE(fate_exists(tmp));
  EXPECT_FALSE(claim(l, to));  // the library would take the usual OPEN: it joins
  auto j = c->call({"OPEN", to, trunc_, "644"});
  ASSERT_EQ(j[0], "OK");
  EXPECT_EQ(j[1], r[1]);
}

// A usual OPEN of a path whose fate a client's leased open claimed, before that OPEN
// came: it waits for it and joins its version, as two openers of one path do.
TEST_F(LeaseTest, AnOpenBetweenALeasedClaimAndItsOpenJoinsIt) {
  wire::Lease l;
  auto leaser = start_with_lease(l);
  ASSERT_NE(l.vid, 0u);
  const std::string path = data_ + "/shared.bin";
  ASSERT_TRUE(claim(l, path));
  std::vector<std::string> other;
  std::thread t([&] {
    auto c = client();
    other = c->call({"OPEN", path, trunc_, "644"});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // (it waits meanwhile)
  const std::string use = use_of(l);
  auto r = leaser->call({"OPEN", path, trunc_, "644", use});
  t.join();
  ASSERT_EQ(r[0], "OK");
  EXPECT_EQ(r[1], std::to_string(l.vid));
  ASSERT_EQ(other.size() > 1 ? other[0] : "", "OK");
  EXPECT_EQ(other[1], std::to_string(l.vid));  // joined, not a second version
}

}  // namespace
}  // namespace ckptfwd::fwd::test
