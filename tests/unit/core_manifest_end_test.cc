// Records cut off the end of the MANIFEST (store/manifest/manifest_end.h): the read-only mark of
// recorded containers tells them even without MANIFEST.tail; a stopped writer's leftover,
// a store made read-only by hand and a record appended after the catalog was loaded are
// not taken for lost records.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <fstream>

#include "core_test_util.h"
#include "store/manifest/end_mark.h"
#include "store/manifest/manifest.h"
#include "store/manifest/manifest_end.h"

namespace ckptfwd {
namespace {

using test::TempDir;

// Writes a container holding path at STORE/name (its record not appended).
void write_container(const std::string& store, const std::string& name, const std::string& path) {
  std::vector<test::TestFile> files{{path, test::smooth_bytes(5000, 7), {}, 0}};
  std::string err;
  ASSERT_TRUE(test::build_container(store + "/" + name, files, 1, 4096, "zstd", &err)) << err;
}

// Writes the container of path and appends its commit record.
void commit(const std::string& store, const std::string& name, const std::string& path) {
  write_container(store, name, path);
  std::string err;
  ASSERT_TRUE(manifest::append_commit(store, name, {test::catalog_entry(path, 0, 5000)}, &err))
      << err;
}

mode_t mode_of(const std::string& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// Removes the MANIFEST's last line (sed -i '$d').
void cut_last_record(const std::string& store) {
  std::string m = store + "/MANIFEST", text;
  {
    std::ifstream in(m, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  size_t last = text.rfind('\n', text.size() - 2);
  std::ofstream out(m, std::ios::binary | std::ios::trunc);
  out << text.substr(0, last == std::string::npos ? 0 : last + 1);
}

// The tail file and the MANIFEST's end mark lost too (a copy of the store made without
// extended attributes): only the containers can tell a cut then.
void lose_tail_and_mark(const std::string& store) {
  ASSERT_EQ(::unlink((store + "/MANIFEST.tail").c_str()), 0);
  ::removexattr((store + "/MANIFEST").c_str(), manifest::kEndMarkXattr);
}

Catalog loaded(const std::string& store) {
  Catalog c;
  std::string err;
  EXPECT_TRUE(c.load(store, &err)) << err;
  return c;
}

struct Store {
  TempDir dir;
  std::string s = dir / "store";
  Store() {
    std::string err;
    EXPECT_TRUE(manifest::ensure_store(s, &err)) << err;
  }
};

TEST(ManifestEnd, AContainerIsReadOnlyOnceItsRecordIsDurable) {
  Store st;
  write_container(st.s, "c-n-1-0.ckc", "/ck/a");
  EXPECT_NE(mode_of(st.s + "/c-n-1-0.ckc") & 0200, 0u) << "writable until recorded";
  std::string err;
  ASSERT_TRUE(
      manifest::append_commit(st.s, "c-n-1-0.ckc", {test::catalog_entry("/ck/a", 0, 5000)}, &err))
      << err;
  EXPECT_EQ(mode_of(st.s + "/c-n-1-0.ckc"), 0400u);
  EXPECT_FALSE(find_lost_records(st.s, loaded(st.s)).any());
}

TEST(ManifestEnd, TheLastRecordCutOffIsFoundWithoutTheTail) {
  Store st;
  commit(st.s, "c-n-1-0.ckc", "/ck/a");
  commit(st.s, "c-n-2-1.ckc", "/ck/b");
  cut_last_record(st.s);
  lose_tail_and_mark(st.s);
  Catalog c = loaded(st.s);
  ASSERT_TRUE(c.problems().empty()) << "the chain of what is left is sound";
  LostRecords lost = find_lost_records(st.s, c);
  ASSERT_EQ(lost.problems.size(), 1u);
  EXPECT_NE(lost.problems[0].find("c-n-2-1.ckc"), std::string::npos) << lost.problems[0];
  EXPECT_NE(lost.problems[0].find("cut off the end"), std::string::npos) << lost.problems[0];
  EXPECT_NE(lost.problems[0].find("/ck/b"), std::string::npos) << lost.problems[0];
  EXPECT_NE(lost.problems[0].find("Fix:"), std::string::npos) << lost.problems[0];
  EXPECT_EQ(lost.containers, std::vector<std::string>{"c-n-2-1.ckc"});
  ASSERT_EQ(lost.paths.count("/ck/b"), 1u);
  EXPECT_EQ(lost.paths.at("/ck/b"), st.s + "/c-n-2-1.ckc");
  EXPECT_EQ(lost.paths.count("/ck/a"), 0u);
}

TEST(ManifestEnd, ANewerVersionOfALiveFileInALostRecordIsNamed) {
  Store st;
  commit(st.s, "c-n-1-0.ckc", "/ck/a");
  commit(st.s, "c-n-2-1.ckc", "/ck/a");
  cut_last_record(st.s);
  lose_tail_and_mark(st.s);
  Catalog c = loaded(st.s);
  ASSERT_NE(c.find("/ck/a"), nullptr) << "the older version is live";
  LostRecords lost = find_lost_records(st.s, c);
  EXPECT_EQ(lost.paths.count("/ck/a"), 1u) << "else the older version is given back as newest";
}

TEST(ManifestEnd, EveryAppendMarksTheManifestsEnd) {
  Store st;
  EXPECT_EQ(manifest::end_mark(st.s), 0u) << "no MANIFEST yet";
  commit(st.s, "c-n-1-0.ckc", "/ck/a");
  commit(st.s, "c-n-2-1.ckc", "/ck/b");
  struct stat sb {};
  ASSERT_EQ(::stat((st.s + "/MANIFEST").c_str(), &sb), 0);
  if (manifest::end_mark(st.s) == 0) GTEST_SKIP() << "no user xattrs on this file system";
  EXPECT_EQ(manifest::end_mark(st.s), static_cast<uint64_t>(sb.st_size));
}

TEST(ManifestEnd, AManifestShorterThanItsEndMarkLostRecordsWithoutTheTail) {
  Store st;
  commit(st.s, "c-n-1-0.ckc", "/ck/a");
  commit(st.s, "c-n-2-1.ckc", "/ck/b");
  if (manifest::end_mark(st.s) == 0) GTEST_SKIP() << "no user xattrs on this file system";
  cut_last_record(st.s);
  ASSERT_EQ(::unlink((st.s + "/MANIFEST.tail").c_str()), 0);
  std::string problem;
  EXPECT_FALSE(manifest::check_tail(st.s, &problem));
  EXPECT_NE(problem.find("cut off its end"), std::string::npos) << problem;
  EXPECT_NE(problem.find(manifest::kEndMarkXattr), std::string::npos) << problem;
  // A store whose mark is behind (an older ckptfwd appended after it) is fine.
  commit(st.s, "c-n-3-2.ckc", "/ck/c");
  ASSERT_EQ(::setxattr((st.s + "/MANIFEST").c_str(), manifest::kEndMarkXattr, "10", 2, 0), 0);
  EXPECT_TRUE(manifest::check_tail(st.s, &problem)) << problem;
}

TEST(ManifestEnd, AStoppedWritersLeftoverIsNotALostRecord) {
  Store st;
  commit(st.s, "c-n-1-0.ckc", "/ck/a");
  write_container(st.s, "c-n-2-1.ckc", "/ck/b");  // renamed in, never recorded
  EXPECT_FALSE(find_lost_records(st.s, loaded(st.s)).any());
  lose_tail_and_mark(st.s);
  EXPECT_FALSE(find_lost_records(st.s, loaded(st.s)).any());
}

TEST(ManifestEnd, WithTheTailCutALeftoverRecordedAgainLaterIsNotNamed) {
  Store st;
  write_container(st.s, "c-n-1-0.ckc", "/ck/a");  // leftover: its version is recorded below
  struct timespec old[2] = {{0, UTIME_OMIT}, {1000, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (st.s + "/c-n-1-0.ckc").c_str(), old, 0), 0);
  commit(st.s, "c-n-2-1.ckc", "/ck/a");
  commit(st.s, "c-n-3-2.ckc", "/ck/b");
  cut_last_record(st.s);
  LostRecords lost = find_lost_records(st.s, loaded(st.s));
  ASSERT_FALSE(lost.problems.empty()) << "the tail names the cut";
  EXPECT_NE(lost.problems[0].find("cut off its end"), std::string::npos) << lost.problems[0];
  EXPECT_EQ(lost.paths.count("/ck/b"), 1u);
  EXPECT_EQ(lost.paths.count("/ck/a"), 0u) << "recorded again after the leftover was written";
}

TEST(ManifestEnd, AStoreMadeReadOnlyByHandOnlyGetsTheTailCheck) {
  Store st;
  commit(st.s, "c-n-1-0.ckc", "/ck/a");
  write_container(st.s, "c-n-2-1.ckc", "/ck/b");
  ASSERT_EQ(::chmod((st.s + "/c-n-2-1.ckc").c_str(), 0400), 0);
  ASSERT_EQ(::chmod((st.s + "/MANIFEST").c_str(), 0400), 0);
  EXPECT_FALSE(find_lost_records(st.s, loaded(st.s)).any());
  ASSERT_EQ(::chmod((st.s + "/MANIFEST").c_str(), 0600), 0);
  EXPECT_TRUE(find_lost_records(st.s, loaded(st.s)).any()) << "a read-only container is a mark";
}

TEST(ManifestEnd, ARecordAppendedAfterTheCatalogWasLoadedIsNotLost) {
  Store st;
  commit(st.s, "c-n-1-0.ckc", "/ck/a");
  Catalog before = loaded(st.s);
  commit(st.s, "c-n-2-1.ckc", "/ck/b");  // another writer, meanwhile
  EXPECT_FALSE(find_lost_records(st.s, before).any());
}

TEST(ManifestEnd, TheMessageOfALostPathNamesTheContainerAndTheFix) {
  std::string m = lost_path_message("/ck/b", "/s/c-n-2-1.ckc");
  EXPECT_EQ(m.rfind("/ck/b: ", 0), 0u) << m;
  EXPECT_NE(m.find("/s/c-n-2-1.ckc"), std::string::npos) << m;
  EXPECT_NE(m.find("Fix: "), std::string::npos) << m;
  EXPECT_NE(m.find("ckptfwd restore /s/c-n-2-1.ckc --to DIR /ck/b"), std::string::npos) << m;
}

}  // namespace
}  // namespace ckptfwd
