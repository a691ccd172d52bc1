// Read links (wire/read_link.h, forwarder/restore/read_links.h): a link names a view for
// one path and one namespace generation; anything that may change a read's answer raises
// the generation, so no link made before is found; the store watch raises it when another
// writer commits; the prefetch shares its work so that the threads stay near the reader.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "forwarder/restore/read_links.h"
#include "forwarder/restore/view_prefetch.h"
#include "forwarder/util/test_hooks.h"
#include "forwarder_test_util.h"
#include "wire/activity.h"
#include "wire/read_link.h"

namespace ckptfwd::fwd::test {
namespace {

bool exists(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

ino_t inode(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0 ? st.st_ino : 0;
}

std::string link_name(const std::string& dir, const std::string& path, uint64_t gen) {
  char name[PATH_MAX];
  EXPECT_TRUE(wire::read_link_name(dir.c_str(), path.c_str(), gen, name, sizeof(name)));
  return name;
}

// A ReadLinks on a page of its own (as the activity file would hold) in a temp dir.
class ReadLinksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ckrltest-XXXXXX";
    dir_ = mkdtemp(tmpl);
    memset(page_, 0, sizeof(page_));
    memcpy(page_, &activity::kMagic, sizeof(activity::kMagic));
    store_ = dir_ + "/store";
    ::mkdir(store_.c_str(), 0700);
    write_file(store_ + "/MANIFEST", "records\n");
    view_ = dir_ + "/rview.data";
    write_file(view_, "the view's bytes");
    ::chmod(view_.c_str(), 0644);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  uint64_t gen_word() const {
    return activity::word_at(const_cast<char*>(page_), activity::kNamespaceOffset)->load();
  }
  uint64_t flag_word() const {
    return activity::word_at(const_cast<char*>(page_), activity::kReadLinksOffset)->load();
  }

  std::string dir_, store_, view_;
  alignas(64) char page_[activity::kBytes];
};

TEST(ReadLinkName, DependsOnThePathAndTheGeneration) {
  char a[PATH_MAX], b[PATH_MAX], c[PATH_MAX];
  ASSERT_TRUE(wire::read_link_name("/s", "/d/f1", 7, a, sizeof(a)));
  ASSERT_TRUE(wire::read_link_name("/s", "/d/f2", 7, b, sizeof(b)));
  ASSERT_TRUE(wire::read_link_name("/s", "/d/f1", 8, c, sizeof(c)));
  EXPECT_STRNE(a, b);
  EXPECT_STRNE(a, c);
  EXPECT_EQ(std::string(a).rfind("/s/rl", 0), 0u) << a;
  EXPECT_EQ(std::string(a).substr(strlen(a) - 7), ".7.data") << a;
  char again[PATH_MAX];
  ASSERT_TRUE(wire::read_link_name("/s", "/d/f1", 7, again, sizeof(again)));
  EXPECT_STREQ(a, again);
  char tiny[16];
  EXPECT_FALSE(wire::read_link_name("/s", "/d/f1", 7, tiny, sizeof(tiny)));
  // Paths that differ only after 16 bytes, or in length, get different names too.
  ASSERT_TRUE(wire::read_link_name("/s", "/0123456789abcdef/x", 1, a, sizeof(a)));
  ASSERT_TRUE(wire::read_link_name("/s", "/0123456789abcdef/y", 1, b, sizeof(b)));
  ASSERT_TRUE(wire::read_link_name("/s", "/0123456789abcdef/x\x01", 1, c, sizeof(c)));
  EXPECT_STRNE(a, b);
  EXPECT_STRNE(a, c);
}

TEST_F(ReadLinksTest, AttachRaisesTheGenerationPastEveryEarlierValue) {
  activity::word_at(page_, activity::kNamespaceOffset)->store(5);
  ReadLinks links(dir_);
  links.attach(page_, "job");
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  EXPECT_GT(gen_word(), 1000000000ull * (ts.tv_sec - 10)) << "a generation an earlier page used";
  uint64_t g = gen_word();
  ReadLinks again(dir_);  // a later forwarder of the session
  again.attach(page_, "job");
  EXPECT_GT(gen_word(), g);
  EXPECT_EQ(flag_word(), 0u);
}

TEST_F(ReadLinksTest, APublishedLinkIsTheViewUntilTheGenerationMoves) {
  std::atomic<uint64_t> published{0};
  ReadLinks links(dir_, &published);
  links.attach(page_, "job");
  links.set_on(true);
  EXPECT_EQ(flag_word(), 1u);
  const uint64_t g = links.generation();
  links.publish(view_, "/data/f", 0644, g);
  const std::string name = link_name(dir_, "/data/f", g);
  ASSERT_TRUE(exists(name));
  EXPECT_EQ(inode(name), inode(view_));
  EXPECT_EQ(read_file(name), "the view's bytes");
  EXPECT_EQ(published.load(), 1u);

  links.raise();
  EXPECT_NE(links.generation(), g);
  links.publish(view_, "/data/g", 0644, g);  // checked under g, published after a raise
  EXPECT_FALSE(exists(link_name(dir_, "/data/g", g)));
  EXPECT_FALSE(exists(link_name(dir_, "/data/g", links.generation())));

  links.drop(view_);
  EXPECT_FALSE(exists(name)) << "a released view's links go with it";
  EXPECT_TRUE(exists(view_));
}

TEST_F(ReadLinksTest, NoLinkWhenOffOrWhenTheViewDoesNotShowTheFilesMode) {
  ReadLinks links(dir_);
  links.attach(page_, "job");
  uint64_t g = links.generation();
  links.publish(view_, "/data/off", 0644, g);
  EXPECT_FALSE(exists(link_name(dir_, "/data/off", g))) << "published while off";

  links.set_on(true);
  g = links.generation();
  links.publish(view_, "/data/other-mode", 0600, g);  // an older view of the entry
  EXPECT_FALSE(exists(link_name(dir_, "/data/other-mode", g)));
  ::chmod(view_.c_str(), 0200);
  links.publish(view_, "/data/unreadable", 0200, g);  // the owner could not read the file
  EXPECT_FALSE(exists(link_name(dir_, "/data/unreadable", g)));
  ::chmod(view_.c_str(), 0644);
  links.publish(dir_ + "/rgone.data", "/data/gone", 0644, g, true);  // released meanwhile
  EXPECT_FALSE(exists(link_name(dir_, "/data/gone", g)));

  links.set_on(false);
  EXPECT_EQ(flag_word(), 0u);
  EXPECT_NE(links.generation(), g) << "turning links off must stop the published ones";
}

TEST_F(ReadLinksTest, AStoreChangedByAnotherWriterRaisesTheGeneration) {
  ReadLinks links(dir_);
  links.attach(page_, "job7");
  links.set_on(true);
  links.watch(store_);
  uint64_t g = links.generation();
  links.poll();
  EXPECT_EQ(links.generation(), g) << "nothing changed";

  {  // another job's commit appends to the MANIFEST
    int fd = ::open((store_ + "/MANIFEST").c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "more\n", 5), 5);
    ::close(fd);
  }
  links.poll();
  EXPECT_GT(links.generation(), g);
  g = links.generation();
  links.poll();
  EXPECT_EQ(links.generation(), g);

  // A MANIFEST rewritten to the same size (a new file under the name).
  write_file(store_ + "/MANIFEST.new", "records\nmore\n");
  ASSERT_EQ(::rename((store_ + "/MANIFEST.new").c_str(), (store_ + "/MANIFEST").c_str()), 0);
  links.poll();
  EXPECT_GT(links.generation(), g);

  // Another node closed a file not on the store yet: its line in the job's close-to-open
  // journal (a publish looks at the lines there, so only a change of it counts on a store
  // whose stat does not lag).
  const std::string journal = store_ + "/.pending-job7";
  write_file(journal, "+\tn1\t1\t/data/f\n");
  g = links.generation();
  links.poll();
  EXPECT_GT(links.generation(), g) << "the journal appeared";
  g = links.generation();
  links.poll();
  EXPECT_EQ(links.generation(), g) << "the same journal";
  {
    int fd = ::open(journal.c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "-\tn1\t1\n", 7), 7);
    ::close(fd);
  }
  links.poll();
  EXPECT_GT(links.generation(), g) << "a line appended";
  g = links.generation();
  ASSERT_EQ(::unlink(journal.c_str()), 0);
  links.poll();
  EXPECT_GT(links.generation(), g) << "the journal removed";
}

TEST_F(ReadLinksTest, TheWatchThreadPollsWithoutBeingAsked) {
  ReadLinks links(dir_);
  links.attach(page_, "job");
  links.set_on(true);
  links.watch(store_);
  uint64_t g = links.generation();
  write_file(store_ + "/MANIFEST", "records\nand one more\n");
  for (int i = 0; i < 100 && links.generation() == g; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(ReadLinks::kPollMs / 2));
  EXPECT_NE(links.generation(), g);
}

TEST(PrefetchRuns, BlocksOfConsecutiveFilesAreDealtRoundRobin) {
  std::vector<uint64_t> small(100, 4096);
  auto runs = prefetch_runs(small, 2);
  ASSERT_EQ(runs.size(), 2u);
  std::vector<size_t> first, second;
  for (size_t j = 0; j < 32; ++j) first.push_back(j);
  for (size_t j = 64; j < 96; ++j) first.push_back(j);
  for (size_t j = 32; j < 64; ++j) second.push_back(j);
  for (size_t j = 96; j < 100; ++j) second.push_back(j);
  EXPECT_EQ(runs[0], first);
  EXPECT_EQ(runs[1], second);

  // Large files: a block closes at kPrefetchBlockBytes (a file each here).
  std::vector<uint64_t> large(5, 8ull << 20);
  runs = prefetch_runs(large, 2);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], (std::vector<size_t>{0, 2, 4}));
  EXPECT_EQ(runs[1], (std::vector<size_t>{1, 3}));

  EXPECT_EQ(prefetch_runs(std::vector<uint64_t>(3, 10), 4).size(), 1u) << "no empty run";
  EXPECT_TRUE(prefetch_runs({}, 2).empty());
  size_t total = 0;
  for (const auto& r : prefetch_runs(std::vector<uint64_t>(1000, 100), 3)) total += r.size();
  EXPECT_EQ(total, 1000u);
}

TEST(PrefetchGroups, FilesSharingChunksAreOneUnitCutAtItsLimit) {
  // Files 0, 2, 3 share chunks, 1 and 4 are alone: units in the order of their first file.
  EXPECT_EQ(prefetch_groups({0, 1, 0, 0, 2}),
            (std::vector<std::vector<size_t>>{{0, 2, 3}, {1}, {4}}));
  // A group larger than kPrefetchGroupFiles is cut into pieces of consecutive files.
  std::vector<size_t> one(kPrefetchGroupFiles * 2 + 3, 0);
  auto units = prefetch_groups(one);
  ASSERT_EQ(units.size(), 3u);
  EXPECT_EQ(units[0].size(), kPrefetchGroupFiles);
  EXPECT_EQ(units[2], (std::vector<size_t>{2 * kPrefetchGroupFiles, 2 * kPrefetchGroupFiles + 1,
                                           2 * kPrefetchGroupFiles + 2}));
  EXPECT_TRUE(prefetch_groups({}).empty());
}

// The forwarder's service: what publishes a link and what stops them.
class ReadLinksServiceTest : public ForwarderTest {
 protected:
  void SetUp() override {
    ForwarderTest::SetUp();
    timing_.view_grace = std::chrono::milliseconds(60000);
  }
  void start_on() {
    start();
    fwd_->core().links.set_on(true);  // (no group in these tests: alone)
  }
  uint64_t gen() { return fwd_->core().links.generation(); }
  // Each (path, bytes) written as a version, then all committed.
  void store_files(Client& c, const std::vector<std::pair<std::string, std::string>>& files) {
    for (const auto& [path, bytes] : files) write_version(c, path, bytes);
    ASSERT_EQ(c.call({"DRAIN"})[0], "OK");
    settle();
  }
  // The store watch raises the generation up to ReadLinks::kPollMs after a commit it
  // sees (this forwarder's too): wait until it has seen them all, or a link a test
  // expects could be published under a generation the watch then leaves behind.
  void settle() {
    fwd_->core().links.poll();
    for (int stable = 0, i = 0; stable < 3 && i < 200; ++i) {
      const uint64_t g = gen();
      std::this_thread::sleep_for(std::chrono::milliseconds(ReadLinks::kPollMs));
      stable = gen() == g ? stable + 1 : 0;
    }
  }
  std::string link_for(const std::string& path) { return link_name(paths_.dir, path, gen()); }
};

TEST_F(ReadLinksServiceTest, AReadOfAStoredFilePublishesItsLink) {
  start_on();
  auto c = client();
  const std::string f = data_ + "/f";
  store_files(*c, {{f, "stored bytes"}});
  EXPECT_FALSE(exists(link_for(f)));
  EXPECT_EQ(read_through(*c, f), "stored bytes");
  ASSERT_TRUE(exists(link_for(f))) << "a read, a STAT and a LIST leave the links alone";
  EXPECT_EQ(read_file(link_for(f)), "stored bytes");
  struct stat st;
  ASSERT_EQ(::lstat(link_for(f).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u) << "the link shows the file's mode";
  EXPECT_EQ(c->call({"STAT", f})[0], "OK");
  EXPECT_EQ(c->call({"LIST", data_})[0], "OK");
  EXPECT_TRUE(exists(link_for(f)));
}

TEST_F(ReadLinksServiceTest, AStagedVersionGetsNoLink) {
  start_on();
  auto c = client();
  const std::string f = data_ + "/staged";
  auto r = c->call({"OPEN", f, std::to_string(O_WRONLY | O_CREAT | O_TRUNC), "644"});
  ASSERT_EQ(r[0], "OK");
  EXPECT_EQ(c->call({"CLOSE", r[1], "0"})[0], "OK");
  EXPECT_EQ(read_through(*c, f), "");  // the staged version: no view of the store
  EXPECT_FALSE(exists(link_for(f)));
}

TEST_F(ReadLinksServiceTest, EveryRequestButAReadMovesTheGeneration) {
  start_on();
  auto c = client();
  const std::string f = data_ + "/f", g = data_ + "/g";
  store_files(*c, {{f, "one"}, {g, "two"}});
  struct Case {
    std::vector<std::string> request;
  };
  const std::vector<Case> cases = {
      {{"OPEN", f, std::to_string(O_WRONLY), "644"}},
      {{"OPEN", f, std::to_string(O_RDONLY | O_CREAT), "644"}},
      {{"OPEN", f, std::to_string(O_RDONLY | O_TRUNC), "644"}},
      {{"RENAME", g, data_ + "/h"}},
      {{"UNLINK", data_ + "/h"}},
      {{"CHMOD", f, "600"}},
  };
  for (const Case& k : cases) {
    uint64_t before = gen();
    c->call(k.request);
    EXPECT_NE(gen(), before) << k.request[0] << " " << (k.request.size() > 2 ? k.request[2] : "");
  }
  uint64_t before = gen();
  read_through(*c, f);
  c->call({"STAT", f});
  c->call({"STATS"});
  c->call({"LIST", data_});
  c->call({"WAITALL"});  // every process's exit
  c->call({"DRAIN"});
  EXPECT_EQ(gen(), before);
}

TEST_F(ReadLinksServiceTest, PrefetchedViewsArePublishedAndReleasedWithTheirLinks) {
  timing_.view_grace = std::chrono::milliseconds(300);
  start_on();
  auto c = client();
  std::vector<std::pair<std::string, std::string>> files;
  for (int i = 0; i < 10; ++i)
    files.emplace_back(data_ + "/p" + std::to_string(i), payload(500, i));
  store_files(*c, files);
  EXPECT_EQ(read_through(*c, data_ + "/p0"), payload(500, 0));
  fwd_->core().prefetch.wait_idle();
  for (int i = 0; i < 10; ++i) {
    const std::string l = link_for(data_ + "/p" + std::to_string(i));
    ASSERT_TRUE(exists(l)) << l;
    EXPECT_EQ(read_file(l), payload(500, i));
  }
  for (int i = 0; i < 300 && exists(link_for(data_ + "/p5")); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(exists(link_for(data_ + "/p5"))) << "a link outlived its view's grace";
}

TEST_F(ReadLinksServiceTest, AReadDuringAWriteOpensCopyPublishesNothingThatOutlivesIt) {
  start_on();
  auto c = client();
  const std::string f = data_ + "/f";
  store_files(*c, {{f, payload(20000, 1)}});
  // A reader's OPEN arrives while a writer's OPEN (no O_TRUNC) copies the stored bytes
  // into its version, not ready yet: it is served the store's view.
  std::atomic<bool> read_done{false};
  std::string during;
  test_hooks().during_starting_copy = [&](const std::string& path) {
    if (path != f) return;
    auto reader = client();
    during = read_through(*reader, f);
    read_done = true;
  };
  auto w = c->call({"OPEN", f, std::to_string(O_WRONLY), "644"});
  ASSERT_EQ(w[0], "OK");
  test_hooks().during_starting_copy = nullptr;
  ASSERT_TRUE(read_done);
  EXPECT_EQ(during, payload(20000, 1));
  // The writer writes and holds the file open: no link may show the store's bytes now.
  int fd = ::open(w[2].c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "NEW", 3, 0), 3);
  ::close(fd);
  EXPECT_FALSE(exists(link_for(f))) << "a link made during the copy is found after it";
  std::string now = read_through(*c, f);
  EXPECT_EQ(now.substr(0, 3), "NEW");
  EXPECT_FALSE(exists(link_for(f)));
  EXPECT_EQ(c->call({"CLOSE", w[1], "20000"})[0], "OK");
}

TEST_F(ReadLinksServiceTest, AViewKeepsOneLinkHoweverOftenItIsPublished) {
  start_on();
  auto c = client();
  const std::string y = data_ + "/y";
  store_files(*c, {{y, "read again and again"}});
  for (int i = 0; i < 20; ++i) {
    write_version(*c, data_ + "/x", payload(100, i));  // raises the generation
    EXPECT_EQ(read_through(*c, y), "read again and again");
  }
  size_t links = 0;
  for (const auto& de : fs::directory_iterator(paths_.dir))
    links += de.path().filename().string().rfind("rl", 0) == 0;
  EXPECT_EQ(links, 1u) << "a link per generation piled up";
  EXPECT_TRUE(exists(link_for(y)));
}

TEST_F(ReadLinksServiceTest, APathWhoseNewestRecordWasCutOffGetsNoLink) {
  start_on();
  auto c = client();
  const std::string f = data_ + "/f", g = data_ + "/g";
  store_files(*c, {{f, "f, first"}, {g, "g, first"}});
  const auto before = fs::file_size(store() + "/MANIFEST");
  store_files(*c, {{f, "f, second"}});
  c.reset();
  stop();
  // The second version's records cut off the MANIFEST (a store that lost its tail).
  fs::resize_file(store() + "/MANIFEST", before);
  start_on();
  c = client();
  EXPECT_EQ(read_through(*c, g), "g, first");  // plans the prefetch of f's first container
  fwd_->core().prefetch.wait_idle();
  EXPECT_FALSE(exists(link_for(f))) << "a link shows the version a read open refuses";
  EXPECT_EQ(read_through(*c, f), "<ERR>");
}

TEST_F(ReadLinksServiceTest, AnotherForwarderInTheGroupTurnsThemOff) {
  start_on();
  auto c = client();
  const std::string f = data_ + "/f";
  store_files(*c, {{f, "bytes"}});
  read_through(*c, f);
  const std::string before = link_for(f);
  ASSERT_TRUE(exists(before));
  fwd_->service().group_changed(false);
  EXPECT_FALSE(fwd_->core().links.on());
  EXPECT_FALSE(exists(link_for(f)));
  read_through(*c, f);
  EXPECT_FALSE(exists(link_for(f))) << "published while another node may write";
}

}  // namespace
}  // namespace ckptfwd::fwd::test
