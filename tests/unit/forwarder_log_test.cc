// The forwarder's log reaches the user (util/log.h, util/log_repeats.h, util/notices.h,
// daemon/log_place.h): lines name time, node, job and pid; a warning repeated per file is
// collapsed with its count; notices reach the session's notices file once per key; the
// default log file sits in the store, or beside the session until the store can be made.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "forwarder/daemon/log_place.h"
#include "forwarder/util/log.h"
#include "forwarder/util/log_repeats.h"
#include "forwarder/util/notices.h"
#include "test_env.h"
#include "wire/activity.h"
#include "wire/notices.h"

namespace ckptfwd::fwd {
namespace {

using ckptfwd::test::file_text;
const auto& slurp = file_text;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

// A directory of the test's own, removed when the test program ends.
std::string temp_dir() {
  static std::vector<std::string> made;
  static struct Cleanup {
    ~Cleanup() {
      for (const std::string& d : made) std::filesystem::remove_all(d);
    }
  } cleanup;
  char tmpl[] = "/tmp/ckptfwd-log-test-XXXXXX";
  made.push_back(mkdtemp(tmpl));
  return made.back();
}

TEST(RepeatFilter, AKeyWritesItsBurstThenCountsAndSaysTheCountWithItsNextLine) {
  RepeatFilter f;
  const int64_t t0 = 1'000;
  for (int i = 0; i < RepeatFilter::kBurst; ++i) EXPECT_TRUE(f.admit(1, t0 + i, "a").write);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(f.admit(1, t0 + 10 + i, "a" + std::to_string(i)).write);
  // Another key is not held back by the first.
  EXPECT_TRUE(f.admit(2, t0 + 20, "b").write);
  // A window later the key writes again and says how many were not written.
  RepeatFilter::Verdict v = f.admit(1, t0 + RepeatFilter::kWindowNs, "a");
  EXPECT_TRUE(v.write);
  EXPECT_EQ(v.unwritten_before, 5u);
  EXPECT_TRUE(f.take_pending().empty());  // said already
}

TEST(RepeatFilter, PendingCountsComeOutOnceWithTheLastLineNotWritten) {
  RepeatFilter f;
  for (int i = 0; i < RepeatFilter::kBurst + 4; ++i) f.admit(7, i, "line " + std::to_string(i));
  std::vector<RepeatFilter::Pending> p = f.take_pending();
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].count, 4u);
  EXPECT_EQ(p[0].sample, "line " + std::to_string(RepeatFilter::kBurst + 3));
  EXPECT_TRUE(f.take_pending().empty());
  EXPECT_FALSE(f.due(0));
  EXPECT_FALSE(f.due(RepeatFilter::kWindowNs - 1));
  EXPECT_TRUE(f.due(RepeatFilter::kWindowNs));
}

TEST(ForwarderLog, LinesNameTimeNodeJobAndPidAndRepeatsAreCollapsed) {
  const std::string dir = temp_dir();
  const std::string file = dir + "/fwd.log";
  log_init(file, "warn");
  log_set_identity("n7", "job42");
  EXPECT_EQ(log_destination(), file);
  for (int i = 0; i < 10; ++i) LOG_WARN("file %d stored agnostic", i);
  for (int i = 0; i < 5; ++i) LOG_ERROR("cannot restore file %d", i);  // never collapsed
  LOG_INFO("not at level warn");
  log_flush_repeats();
  log_init("stderr", "warn");
  std::vector<std::string> lines = lines_of(slurp(file));
  const std::regex shape(
      R"(ckptfwd-forwarder: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z node=n7 job=job42 pid=\d+ (warn|error): .*)");
  for (const std::string& l : lines) EXPECT_TRUE(std::regex_match(l, shape)) << l;
  ASSERT_EQ(lines.size(), static_cast<size_t>(RepeatFilter::kBurst) + 5 + 1) << slurp(file);
  EXPECT_NE(lines[0].find("file 0 stored agnostic"), std::string::npos);
  for (int i = 0; i < 5; ++i)
    EXPECT_NE(
        lines[RepeatFilter::kBurst + i].find("error: cannot restore file " + std::to_string(i)),
        std::string::npos);
  EXPECT_NE(lines.back().find("7 more lines like this one were not written: file 9 stored"),
            std::string::npos)
      << lines.back();
  EXPECT_EQ(std::to_string(getpid()),
            std::regex_replace(lines[0], std::regex(R"(.* pid=(\d+) .*)"), "$1"));
}

TEST(ForwarderLog, AtLevelDebugEveryLineIsWritten) {
  const std::string dir = temp_dir();
  const std::string file = dir + "/fwd.log";
  log_init(file, "debug");
  for (int i = 0; i < 10; ++i) LOG_WARN("again %d", i);
  log_init("stderr", "warn");
  EXPECT_EQ(lines_of(slurp(file)).size(), 10u);
}

TEST(Notices, APostReachesTheFileOncePerKeyAndTheWordFollowsItsLength) {
  const std::string dir = temp_dir();
  alignas(64) static char page[activity::kBytes];
  Notices n;
  n.attach(dir, page);
  auto word = [&] { return activity::word_at(page, activity::kNoticesOffset)->load(); };
  EXPECT_EQ(word(), 0u);
  EXPECT_TRUE(n.post("schema r1", "rule r1 does not fit\nsecond line"));
  EXPECT_FALSE(n.post("schema r1", "rule r1 does not fit again"));
  EXPECT_TRUE(n.post("store s", std::string(3 * wire::kMaxNoticeLine, 'x')));
  const std::string text = slurp(dir + "/" + wire::kNoticesFile);
  std::vector<std::string> lines = lines_of(text);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "rule r1 does not fit second line");
  EXPECT_EQ(lines[1].size(), wire::kMaxNoticeLine - 1);
  EXPECT_EQ(word(), text.size());
  // A later forwarder of the session starts from the file's length.
  Notices later;
  activity::word_at(page, activity::kNoticesOffset)->store(0);
  later.attach(dir, page);
  EXPECT_EQ(word(), text.size());
  EXPECT_TRUE(later.post("schema r1", "said again by a new forwarder"));
}

TEST(Notices, WithoutAnActivityPageNothingIsPosted) {
  const std::string dir = temp_dir();
  Notices n;
  n.attach(dir, nullptr);
  EXPECT_FALSE(n.post("k", "text"));
  struct stat st {};
  EXPECT_NE(stat((dir + "/" + wire::kNoticesFile).c_str(), &st), 0);
}

SessionPaths paths_in(const std::string& stage) {
  SessionPaths p{};
  snprintf(p.stage_root, sizeof(p.stage_root), "%s", stage.c_str());
  snprintf(p.node, sizeof(p.node), "n1");
  snprintf(p.job, sizeof(p.job), "77");
  return p;
}

TEST(LogPlace, TheLogGoesToTheStoreWhenItsDirectoryExistsElseBesideTheSession) {
  const std::string dir = temp_dir();
  Config cfg;
  cfg.capture_dirs = {dir + "/ckpt"};
  const LogPlace place = log_place(cfg, paths_in(dir + "/stage"));
  EXPECT_EQ(place.preferred, dir + "/ckpt/.ckptfwd/logs/77.n1.log");
  EXPECT_EQ(place.fallback, dir + "/stage/ckptfwd-log-" + std::to_string(geteuid()) + "-77-n1.log");
  // The capture directory does not exist yet: never made by the forwarder.
  EXPECT_EQ(open_log_place(place), place.fallback);
  struct stat st {};
  EXPECT_NE(stat((dir + "/ckpt").c_str(), &st), 0);
  { std::ofstream(place.fallback) << "early line\n"; }
  EXPECT_FALSE(settle_log_file(place, place.fallback));  // still no capture directory
  // The application made it: the lines move into the store's file at exit.
  ASSERT_EQ(mkdir((dir + "/ckpt").c_str(), 0755), 0);
  EXPECT_TRUE(settle_log_file(place, place.fallback));
  EXPECT_EQ(slurp(place.preferred), "early line\n");
  EXPECT_NE(stat(place.fallback.c_str(), &st), 0);
  ASSERT_EQ(stat((dir + "/ckpt/.ckptfwd/logs").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(open_log_place(place), place.preferred);
  EXPECT_FALSE(settle_log_file(place, place.preferred));  // nothing to move
}

TEST(LogPlace, CkptfwdStoreNamesThePlace) {
  const std::string dir = temp_dir();
  Config cfg;
  cfg.store = dir + "/store";
  cfg.capture_dirs = {dir + "/ckpt"};
  const LogPlace place = log_place(cfg, paths_in(dir));
  EXPECT_EQ(place.preferred, dir + "/store/logs/77.n1.log");
  EXPECT_EQ(open_log_place(place), place.preferred);
}

}  // namespace
}  // namespace ckptfwd::fwd
