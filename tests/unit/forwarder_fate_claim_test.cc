// A path's staged fate (wire/fate.h) as the forwarder claims it for a client: one link of
// its claim file under the fate's name at OPEN, released once the CLOSE's reply went out
// (the application does not wait for the unlink); a library reads the claim as "staged by
// a live forwarder" without a path line; a claim the book did not make for path is not
// removed by a release of path.
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "core_test_util.h"
#include "forwarder/state/fate_file.h"
#include "forwarder_test_util.h"
#include "wire/fate.h"

namespace ckptfwd::fwd::test {

namespace {

std::string fate_name(const std::string& dir, const std::string& path) {
  char buf[PATH_MAX + 32];
  return fate::fate_file(dir.c_str(), path.c_str(), buf, sizeof(buf)) ? buf : "";
}

bool exists(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

TEST(FateText, AClaimFileReadsAsStagedForAnyPathButNamesNone) {
  char text[64];
  ASSERT_GT(fate::claim_text(4242, text, sizeof(text)), 0u);
  long pid = 0;
  bool named = true;
  EXPECT_EQ(fate::parse_fate(text, "/any/path", &pid, &named), fate::Fate::kStaged);
  EXPECT_EQ(pid, 4242);
  EXPECT_FALSE(named);
  // The forms with a path line still name theirs, and only theirs.
  char full[128];
  ASSERT_GT(fate::fate_text(fate::Fate::kStaged, 7, "/a", full, sizeof(full)), 0u);
  EXPECT_EQ(fate::parse_fate(full, "/a", &pid, &named), fate::Fate::kStaged);
  EXPECT_TRUE(named);
  EXPECT_EQ(fate::parse_fate(full, "/b", &pid, &named), fate::Fate::kNone);
  ASSERT_GT(fate::fate_text(fate::Fate::kDirect, 0, "/a", full, sizeof(full)), 0u);
  EXPECT_EQ(fate::parse_fate(full, "/a", nullptr), fate::Fate::kDirect);
  EXPECT_EQ(fate::parse_fate(full, "/b", nullptr), fate::Fate::kNone);
  // A direct fate without its path line is no fate at all.
  EXPECT_EQ(fate::parse_fate("direct\n", "/a", nullptr), fate::Fate::kNone);
}

TEST(FateBookClaims, AClaimIsALinkOfTheClaimFileAndAReleaseOnlyRemovesItsOwn) {
  ckptfwd::test::TempDir dir;
  const std::string a = "/ckpt/a.dat", b = "/ckpt/b.dat";
  {
    FateBook book(dir.path());
    ASSERT_EQ(book.claim_staged(a), fate::Fate::kStaged);
    ASSERT_EQ(book.claim_staged(b), fate::Fate::kStaged);
    const std::string claim = dir / ("fate.staged." + std::to_string(getpid()));
    struct stat cs, as;
    ASSERT_EQ(::stat(claim.c_str(), &cs), 0);
    ASSERT_EQ(::stat(fate_name(dir.path(), a).c_str(), &as), 0);
    EXPECT_EQ(cs.st_ino, as.st_ino) << "the fate is a name of the claim file";
    EXPECT_EQ(cs.st_nlink, 3u);
    EXPECT_EQ(read_file(claim), "staged " + std::to_string(getpid()) + "\n");
    EXPECT_FALSE(book.is_direct(a));

    book.release_staged(a);
    EXPECT_FALSE(exists(fate_name(dir.path(), a)));
    EXPECT_TRUE(exists(fate_name(dir.path(), b)));

    // A claim this book did not make for path c (the same fate name taken by another
    // path's claim: here b's claim linked under c's name) stays.
    const std::string c = "/ckpt/c.dat";
    ASSERT_EQ(::link(claim.c_str(), fate_name(dir.path(), c).c_str()), 0);
    book.release_staged(c);
    EXPECT_TRUE(exists(fate_name(dir.path(), c)));

    // The claim file removed behind the book's back: made again at the next claim.
    ASSERT_EQ(::unlink(claim.c_str()), 0);
    const std::string d = "/ckpt/d.dat";
    ASSERT_EQ(book.claim_staged(d), fate::Fate::kStaged);
    EXPECT_TRUE(exists(claim));
    EXPECT_TRUE(exists(fate_name(dir.path(), d)));

    // A direct fate wins over a new claim, and a later claim does not replace it.
    book.make_direct(a);
    EXPECT_TRUE(book.is_direct(a));
    EXPECT_EQ(book.claim_staged(a), fate::Fate::kDirect);
    EXPECT_EQ(read_file(claim), "staged " + std::to_string(getpid()) + "\n")
        << "a fate changes by a rename over its name, never by a write into it";
  }
  EXPECT_FALSE(exists(dir / ("fate.staged." + std::to_string(getpid()))))
      << "the claim file goes with the book";
}

TEST(FateBookClaims, AStartingForwarderRemovesTheClaimFilesOfTheOnesBeforeIt) {
  ckptfwd::test::TempDir dir;
  // A killed forwarder's claim file and one of its claims (a link of it).
  const std::string dead = dir / "fate.staged.999999999";
  write_file(dead, "staged 999999999\n");
  const std::string stale = fate_name(dir.path(), "/ckpt/x.dat");
  ASSERT_EQ(::link(dead.c_str(), stale.c_str()), 0);
  FateBook book(dir.path());
  ASSERT_EQ(book.claim_staged("/ckpt/own.dat"), fate::Fate::kStaged);
  book.remove_dead_claim_files();
  EXPECT_FALSE(exists(dead)) << "else the session directory is never empty again";
  EXPECT_TRUE(exists(stale)) << "its claims stay: stale by their pid, replaced when claimed";
  EXPECT_TRUE(exists(dir / ("fate.staged." + std::to_string(getpid())))) << "not its own";
  // The stale claim is taken over by a claim of this forwarder.
  EXPECT_EQ(book.claim_staged("/ckpt/x.dat"), fate::Fate::kStaged);
  long pid = 0;
  EXPECT_EQ(fate::parse_fate(read_file(stale).c_str(), "/ckpt/x.dat", &pid), fate::Fate::kStaged);
  EXPECT_EQ(pid, static_cast<long>(getpid()));
}

class FateClaimTest : public ForwarderTest {};

TEST_F(FateClaimTest, TheCloseRepliesBeforeTheClaimGoesAndTheNextRequestFindsItGone) {
  start();
  auto c = client();
  const std::string path = data_ + "/f.dat";
  const std::string fate = fate_name(paths_.dir, path);
  auto r = c->call({"OPEN", path, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
  ASSERT_EQ(r.size(), 5u);
  ASSERT_EQ(r[0], "OK");
  struct stat st;
  ASSERT_EQ(::stat(fate.c_str(), &st), 0) << "claimed at OPEN";
  EXPECT_GE(st.st_nlink, 2u) << "one link of the claim file";
  write_file(r[2], "bytes");
  EXPECT_EQ(c->call({"CLOSE", r[1], "5"})[0], "OK");
  // The session released it after the reply, before it read the next request.
  EXPECT_EQ(c->call({"STAT", path})[0], "OK");
  EXPECT_FALSE(exists(fate)) << "released after the last writer's CLOSE";
  // Claimed again by the next write open, and the bytes are the newest.
  EXPECT_NE(write_version(*c, path, "newer"), "");
  EXPECT_EQ(read_through(*c, path), "newer");
}

TEST_F(FateClaimTest, AClaimReleasedAfterTheReplyStaysWhenAnotherWriterOpenedThePathMeanwhile) {
  start();
  auto a = client();
  auto b = client();
  const std::string path = data_ + "/g.dat";
  const std::string fate = fate_name(paths_.dir, path);
  const std::string wr = std::to_string(O_WRONLY | O_CREAT | O_TRUNC);
  auto ra = a->call({"OPEN", path, wr, "644"});
  ASSERT_EQ(ra[0], "OK");
  write_file(ra[2], "first");
  // Between a's CLOSE reply and its release, b opens the path for writing: its new
  // version takes over the claim (the book still holds it), so the release must not go.
  std::vector<std::string> rb;
  bool once = true;  // only a's first release
  test_hooks().before_release_after_reply = [&] {
    if (std::exchange(once, false)) rb = b->call({"OPEN", path, wr, "644"});
  };
  EXPECT_EQ(a->call({"CLOSE", ra[1], "5"})[0], "OK");
  EXPECT_EQ(a->call({"STAT", path})[0], "OK");  // a's session released (or kept) by now
  ASSERT_EQ(rb.size(), 5u);
  ASSERT_EQ(rb[0], "OK");
  EXPECT_TRUE(exists(fate)) << "b writes the path through staging: its claim stays";
  write_file(rb[2], "second");
  EXPECT_EQ(b->call({"CLOSE", rb[1], "6"})[0], "OK");
  EXPECT_EQ(b->call({"STAT", path})[0], "OK");
  EXPECT_FALSE(exists(fate)) << "released after b's close";
  EXPECT_EQ(read_through(*a, path), "second");
}

}  // namespace
}  // namespace ckptfwd::fwd::test
