// Manifest journal and catalog replay: records, renames, unlinks, hostile path bytes,
// torn and corrupt lines.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <thread>

#include "core_test_util.h"
#include "store/manifest/manifest.h"
#include "store/manifest/manifest_record.h"
#include "store/manifest/materialize.h"

namespace ckptfwd {
namespace {

using test::TempDir;

CatalogEntry entry(const std::string& path, uint32_t index, uint64_t size) {
  CatalogEntry e = test::catalog_entry(path, index, size);
  e.mtime_ns = -5;  // negative times must survive too (pre-1970 files)
  return e;
}

std::string manifest_text(const std::string& store) {
  std::vector<uint8_t> b = test::read_all(store + "/MANIFEST");
  return std::string(b.begin(), b.end());
}

void append_raw(const std::string& store, const std::string& text) {
  std::string all = manifest_text(store) + text;
  test::write_all(store + "/MANIFEST", std::vector<uint8_t>(all.begin(), all.end()));
}

TEST(Manifest, EnsureStoreCreatesNestedPrivateDirectories) {
  TempDir dir;
  std::string store = dir / "a/b/.ckptfwd";
  std::string err;
  ASSERT_TRUE(manifest::ensure_store(store, &err)) << err;
  struct stat st;
  ASSERT_EQ(::stat(store.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0077, 0u) << "store must not be readable by others";
  EXPECT_TRUE(manifest::ensure_store(store, &err)) << "idempotent";
  EXPECT_TRUE(manifest::ensure_store(store + "/", &err));
  test::write_all(dir / "file", {1});
  EXPECT_FALSE(manifest::ensure_store(dir / "file", &err));
  EXPECT_NE(err.find("not a directory"), std::string::npos) << err;
  EXPECT_FALSE(manifest::ensure_store(dir / "file/sub", &err));
}

TEST(Manifest, MissingManifestIsAnEmptyCatalog) {
  TempDir dir;
  Catalog c;
  std::string err;
  EXPECT_TRUE(c.load(dir.path(), &err)) << err;
  EXPECT_TRUE(c.entries().empty());
  EXPECT_TRUE(c.problems().empty());
}

TEST(Manifest, AppendingToAMissingStoreFailsWithAHint) {
  TempDir dir;
  std::string err;
  EXPECT_FALSE(manifest::append_unlink(dir / "nope", "/x", &err));
  EXPECT_NE(err.find("does not exist"), std::string::npos) << err;
}

TEST(Manifest, CommitsRenamesAndUnlinksReplay) {
  TempDir dir;
  std::string s = dir.path(), err;
  ASSERT_TRUE(manifest::append_commit(s, "c-1.ckc", test::kFakeId,
                                      {entry("/ck/a", 0, 10), entry("/ck/b", 1, 20)}, &err))
      << err;
  ASSERT_TRUE(manifest::append_commit(s, "c-2.ckc", test::kFakeId, {entry("/ck/a", 0, 11)}, &err))
      << err;
  ASSERT_TRUE(manifest::append_rename(s, "/ck/b", "/ck/b.old", &err)) << err;
  ASSERT_TRUE(manifest::append_commit(s, "c-3.ckc", test::kFakeId, {entry("/ck/tmp", 0, 30)}, &err))
      << err;
  ASSERT_TRUE(manifest::append_rename(s, "/ck/tmp", "/ck/a", &err)) << err;  // replaces a
  ASSERT_TRUE(manifest::append_commit(s, "c-4.ckc", test::kFakeId, {entry("/ck/gone", 0, 1)}, &err))
      << err;
  ASSERT_TRUE(manifest::append_unlink(s, "/ck/gone", &err)) << err;
  ASSERT_TRUE(manifest::append_unlink(s, "/never/existed", &err)) << err;
  ASSERT_TRUE(manifest::append_commit(s, "c-2.ckc", test::kFakeId, {entry("/ck/z", 3, 5)}, &err))
      << err;

  Catalog c;
  ASSERT_TRUE(c.load(s, &err)) << err;
  EXPECT_TRUE(c.problems().empty()) << c.problems()[0];
  ASSERT_EQ(c.entries().size(), 3u);
  const CatalogEntry* a = c.find("/ck/a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->container, "c-3.ckc");
  EXPECT_EQ(a->size, 30u);
  EXPECT_EQ(a->path, "/ck/a");
  const CatalogEntry* b = c.find("/ck/b.old");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->container, "c-1.ckc");
  EXPECT_EQ(b->file_index, 1u);
  EXPECT_EQ(b->mode, 0600u);
  EXPECT_EQ(b->mtime_ns, -5);
  EXPECT_EQ(c.find("/ck/b"), nullptr);
  EXPECT_EQ(c.find("/ck/tmp"), nullptr);
  EXPECT_EQ(c.find("/ck/gone"), nullptr);
  EXPECT_NE(c.find("/ck/z"), nullptr);
  EXPECT_EQ(c.containers(), (std::vector<std::string>{"c-1.ckc", "c-2.ckc", "c-3.ckc", "c-4.ckc"}));

  // Every line ends in the container identity (commit), the chain and the checksum mark.
  std::string text = manifest_text(s);
  EXPECT_EQ(text.find("commit\tc-1.ckc\t2\t/ck/a\t0\t10\t600\t-5\t/ck/b\t1\t20\t600\t-5\t4096\t"
                      "5eed5eed5eed5eed\t@"),
            0u)
      << text;
}

TEST(Manifest, ChmodRecordsChangeTheModeOfLiveEntriesOnReplay) {
  TempDir dir;
  std::string s = dir.path(), err;
  ASSERT_TRUE(manifest::append_commit(s, "c-1.ckc", test::kFakeId,
                                      {entry("/ck/a", 0, 10), entry("/ck/b", 1, 20)}, &err))
      << err;
  ASSERT_TRUE(manifest::append_chmod(s, "/ck/a", 0755, &err)) << err;
  ASSERT_TRUE(manifest::append_chmod(s, "/ck/missing", 0700, &err)) << err;  // no-op
  ASSERT_TRUE(manifest::append_rename(s, "/ck/b", "/ck/c", &err)) << err;
  ASSERT_TRUE(manifest::append_chmod(s, "/ck/c", 0440, &err)) << err;
  // A later commit of the path brings its own mode.
  ASSERT_TRUE(manifest::append_commit(s, "c-2.ckc", test::kFakeId, {entry("/ck/d", 0, 1)}, &err))
      << err;
  ASSERT_TRUE(manifest::append_chmod(s, "/ck/d", 0644, &err)) << err;
  ASSERT_TRUE(manifest::append_commit(s, "c-3.ckc", test::kFakeId, {entry("/ck/d", 0, 2)}, &err))
      << err;
  append_raw(s, "chmod\t/ck/a\t9z\t#0000000000000000\n");  // bad checksum anyway
  Catalog c;
  ASSERT_TRUE(c.load(s, &err)) << err;
  ASSERT_EQ(c.entries().size(), 3u);
  EXPECT_EQ(c.find("/ck/a")->mode, 0755u);
  EXPECT_EQ(c.find("/ck/a")->container, "c-1.ckc");
  EXPECT_EQ(c.find("/ck/c")->mode, 0440u);
  EXPECT_EQ(c.find("/ck/d")->mode, 0600u);
  EXPECT_EQ(c.find("/ck/missing"), nullptr);
  EXPECT_EQ(c.problems().size(), 1u);
  EXPECT_NE(manifest_text(s).find("chmod\t/ck/a\t755\t@"), std::string::npos);
}

TEST(Manifest, DirectoryRenameMovesTheFilesBelowIt) {
  Catalog c;
  c.apply_commit("c.ckc", {entry("/run/tmp/a", 0, 1), entry("/run/tmp/sub/b", 1, 2),
                           entry("/run/tmpfile", 2, 3)});
  c.apply_rename("/run/tmp", "/run/ckpt");
  EXPECT_NE(c.find("/run/ckpt/a"), nullptr);
  EXPECT_NE(c.find("/run/ckpt/sub/b"), nullptr);
  EXPECT_EQ(c.find("/run/ckpt/sub/b")->path, "/run/ckpt/sub/b");
  EXPECT_NE(c.find("/run/tmpfile"), nullptr) << "a sibling with the same prefix stays";
  EXPECT_EQ(c.entries().size(), 3u);
}

TEST(Manifest, WeirdPathBytesRoundTrip) {
  TempDir dir;
  std::string s = dir.path(), err;
  std::vector<std::string> paths = {
      "/ck/tab\there", "/ck/new\nline",         "/ck/100%done", "/ck/%25literal",
      "/ck/cr\rx",     "/ck/\xc3\xa9t\xc3\xa9", "/ck/sp ace",   "/ck/#hash\t#0000000000000000"};
  std::vector<CatalogEntry> files;
  for (size_t i = 0; i < paths.size(); ++i) files.push_back(entry(paths[i], uint32_t(i), i));
  ASSERT_TRUE(manifest::append_commit(s, "we\tird%.ckc", test::kFakeId, files, &err)) << err;
  ASSERT_TRUE(manifest::append_rename(s, paths[1], "/ck/renamed\n\t%", &err)) << err;
  // One record is exactly one line.
  std::string text = manifest_text(s);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  Catalog c;
  ASSERT_TRUE(c.load(s, &err)) << err;
  EXPECT_TRUE(c.problems().empty()) << c.problems()[0];
  EXPECT_EQ(c.entries().size(), paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    if (i == 1) continue;
    const CatalogEntry* e = c.find(paths[i]);
    ASSERT_NE(e, nullptr) << paths[i];
    EXPECT_EQ(e->file_index, i);
    EXPECT_EQ(e->container, "we\tird%.ckc");
  }
  EXPECT_NE(c.find("/ck/renamed\n\t%"), nullptr);
}

TEST(Manifest, TornLastLineIsSkippedAndTheNextAppendStillWorks) {
  TempDir dir;
  std::string s = dir.path(), err;
  ASSERT_TRUE(manifest::append_commit(s, "c-1.ckc", test::kFakeId, {entry("/a", 0, 1)}, &err));
  append_raw(s, "commit\tc-2.ckc\t1\t/b\t0\t1\t6");  // a crash mid-write
  Catalog c;
  ASSERT_TRUE(c.load(s, &err));
  EXPECT_EQ(c.entries().size(), 1u);
  ASSERT_EQ(c.problems().size(), 1u);
  EXPECT_EQ(c.problems()[0].rfind("MANIFEST:2: ", 0), 0u) << c.problems()[0];

  // The next record starts a fresh line instead of gluing onto the torn one.
  ASSERT_TRUE(manifest::append_commit(s, "c-3.ckc", test::kFakeId, {entry("/c", 0, 1)}, &err))
      << err;
  ASSERT_TRUE(c.load(s, &err));
  EXPECT_NE(c.find("/a"), nullptr);
  EXPECT_EQ(c.find("/b"), nullptr);
  EXPECT_NE(c.find("/c"), nullptr);
  EXPECT_EQ(c.problems().size(), 1u);
}

TEST(Manifest, CorruptAndForeignLinesAreReportedAndTheRestIsKept) {
  TempDir dir;
  std::string s = dir.path(), err;
  ASSERT_TRUE(manifest::append_commit(s, "c-1.ckc", test::kFakeId, {entry("/a", 0, 1)}, &err));
  std::string text = manifest_text(s);
  // A flipped byte in the path: the checksum no longer matches.
  std::string flipped = text;
  flipped[flipped.find("/a")] = '/';
  flipped[flipped.find("/a") + 1] = 'b';
  append_raw(s, flipped.substr(0));  // line 2: bad checksum
  append_raw(s, "hello world\n");    // line 3: no checksum
  append_raw(s, "\n");               // empty: ignored silently
  ASSERT_TRUE(
      manifest::append_commit(s, "c-2.ckc", test::kFakeId, {entry("/d", 0, 1)}, &err));  // line 5
  Catalog c;
  ASSERT_TRUE(c.load(s, &err));
  EXPECT_NE(c.find("/a"), nullptr);
  EXPECT_EQ(c.find("/b"), nullptr);
  EXPECT_NE(c.find("/d"), nullptr);
  ASSERT_EQ(c.problems().size(), 2u);
  EXPECT_NE(c.problems()[0].find("MANIFEST:2: checksum"), std::string::npos) << c.problems()[0];
  EXPECT_NE(c.problems()[1].find("MANIFEST:3: "), std::string::npos) << c.problems()[1];
}

// Lines with a valid checksum but bad content are syntax problems, not crashes.
TEST(Manifest, WellChecksummedButMalformedRecordsAreRejected) {
  TempDir dir;
  std::string s = dir.path(), err;
  auto line = [](const std::string& body) {
    char hex[17];
    snprintf(hex, sizeof(hex), "%016llx",
             static_cast<unsigned long long>(XXH64(body.data(), body.size(), 0)));
    return body + "\t#" + hex + "\n";
  };
  std::string bad = line("commit\tc.ckc\t2\t/a\t0\t1\t644\t0") +  // says 2, has 1
                    line("commit\tc.ckc\t1\t/a\tx\t1\t644\t0") +  // index not a number
                    line("commit\tc.ckc\t1\t/a\t0\t1\t999\t0") +  // mode not octal
                    line("commit\tc.ckc\t1\t/a\t0\t1\t644\t99999999999999999999") +
                    line("commit\tc.ckc\t99999999999999999999") + line("rename\t/a") +
                    line("unlink") + line("unlink\t") + line("frobnicate\t/a") +
                    line("unlink\t/a%2") + line("unlink\t/a%zz") +
                    line("commit\tc.ckc\t1\t/ok\t0\t1\t644\t0");  // the one good record
  test::write_all(s + "/MANIFEST", std::vector<uint8_t>(bad.begin(), bad.end()));
  Catalog c;
  ASSERT_TRUE(c.load(s, &err));
  EXPECT_EQ(c.problems().size(), 11u);
  EXPECT_EQ(c.entries().size(), 1u);
  EXPECT_NE(c.find("/ok"), nullptr);
}

TEST(Manifest, ReloadResetsState) {
  TempDir a, b;
  std::string err;
  ASSERT_TRUE(manifest::append_commit(a.path(), "c.ckc", test::kFakeId, {entry("/a", 0, 1)}, &err));
  Catalog c;
  ASSERT_TRUE(c.load(a.path(), &err));
  ASSERT_TRUE(c.load(b.path(), &err));
  EXPECT_TRUE(c.entries().empty());
  EXPECT_TRUE(c.containers().empty());
}

// ---------------------------------------------------------------------------------------
// The record chain and container identities (manifest.h, "Every line then ends in").

std::vector<std::string> manifest_lines(const std::string& store) {
  std::vector<std::string> out;
  std::string t = manifest_text(store);
  for (size_t p = 0, nl; (nl = t.find('\n', p)) != std::string::npos; p = nl + 1)
    out.push_back(t.substr(p, nl - p));
  return out;
}

void write_lines(const std::string& store, const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  test::write_all(store + "/MANIFEST", std::vector<uint8_t>(all.begin(), all.end()));
}

// A line of the older format: fields, then "\t#" and the xxh64 of what precedes.
std::string old_format_line(const std::string& body) {
  char hex[17];
  snprintf(hex, sizeof(hex), "%016llx",
           static_cast<unsigned long long>(XXH64(body.data(), body.size(), 0)));
  return body + "\t#" + hex;
}

// Four chained records: commit c-1 (/a), commit c-2 (/b), rename /b -> /c, unlink /a.
void four_records(const std::string& s) {
  std::string err;
  ASSERT_TRUE(
      manifest::append_commit(s, "c-1.ckc", ContainerIdentity{100, 7}, {entry("/a", 0, 1)}, &err))
      << err;
  ASSERT_TRUE(
      manifest::append_commit(s, "c-2.ckc", ContainerIdentity{200, 8}, {entry("/b", 0, 2)}, &err))
      << err;
  ASSERT_TRUE(manifest::append_rename(s, "/b", "/c", &err)) << err;
  ASSERT_TRUE(manifest::append_unlink(s, "/a", &err)) << err;
}

TEST(ManifestChain, RecordsCarryChainAndContainerIdentity) {
  TempDir dir;
  std::string s = dir.path(), err;
  four_records(s);
  std::vector<std::string> lines = manifest_lines(s);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find("\t/a\t0\t1\t600\t-5\t100\t0000000000000007\t@"), std::string::npos)
      << lines[0];
  for (const std::string& l : lines) EXPECT_NE(l.find("\t@"), std::string::npos) << l;
  Catalog c;
  ASSERT_TRUE(c.load(s, &err)) << err;
  EXPECT_TRUE(c.problems().empty()) << c.problems()[0];
  EXPECT_EQ(c.chained_records(), 4u);
  EXPECT_EQ(c.unchained_records(), 0u);
  EXPECT_EQ(c.identity_of("c-2.ckc"), (ContainerIdentity{200, 8}));
  ASSERT_NE(c.find("/c"), nullptr);
  EXPECT_EQ(c.find("/c")->base_id, (ContainerIdentity{200, 8}));
  EXPECT_EQ(c.find("/a"), nullptr);
}

TEST(ManifestChain, ADeletedMiddleLineBreaksTheChainAtTheNextRecord) {
  TempDir dir;
  std::string s = dir.path(), err;
  four_records(s);
  std::vector<std::string> lines = manifest_lines(s);
  lines.erase(lines.begin() + 1);
  write_lines(s, lines);
  Catalog c;
  ASSERT_TRUE(c.load(s, &err)) << err;
  ASSERT_EQ(c.chain_breaks().size(), 1u);
  EXPECT_EQ(c.chain_breaks()[0].rfind("MANIFEST:2: chain broken", 0), 0u) << c.chain_breaks()[0];
  EXPECT_EQ(c.problems().size(), 1u);
}

TEST(ManifestChain, ReorderedLinesBreakTheChain) {
  TempDir dir;
  std::string s = dir.path(), err;
  four_records(s);
  std::vector<std::string> lines = manifest_lines(s);
  std::swap(lines[1], lines[2]);
  write_lines(s, lines);
  Catalog c;
  ASSERT_TRUE(c.load(s, &err)) << err;
  EXPECT_GE(c.chain_breaks().size(), 1u);
  EXPECT_EQ(c.chain_breaks()[0].rfind("MANIFEST:2: chain broken", 0), 0u) << c.chain_breaks()[0];
}

TEST(ManifestChain, ADeletedFirstLineBreaksTheChain) {
  TempDir dir;
  std::string s = dir.path(), err;
  four_records(s);
  std::vector<std::string> lines = manifest_lines(s);
  lines.erase(lines.begin());
  write_lines(s, lines);
  Catalog c;
  ASSERT_TRUE(c.load(s, &err)) << err;
  ASSERT_EQ(c.chain_breaks().size(), 1u);
  EXPECT_EQ(c.chain_breaks()[0].rfind("MANIFEST:1: ", 0), 0u) << c.chain_breaks()[0];
}

TEST(ManifestChain, TornAndCorruptLinesDoNotBreakTheChainOfLaterRecords) {
  TempDir dir;
  std::string s = dir.path(), err;
  four_records(s);
  std::vector<std::string> lines = manifest_lines(s);
  lines[1][lines[1].find("\t2\t") + 1] = '3';  // the size of /b: the line checksum fails
  write_lines(s, lines);
  append_raw(s, "commit\tc-9.ckc\t1\t/z\t0");  // torn: a crash mid-append
  ASSERT_TRUE(manifest::append_unlink(s, "/nothing", &err)) << err;
  Catalog c;
  ASSERT_TRUE(c.load(s, &err)) << err;
  EXPECT_TRUE(c.chain_breaks().empty()) << c.chain_breaks()[0];
  ASSERT_EQ(c.problems().size(), 2u);
  EXPECT_NE(c.problems()[0].find("MANIFEST:2: checksum mismatch"), std::string::npos);
  EXPECT_NE(c.problems()[1].find("MANIFEST:5: no checksum"), std::string::npos) << c.problems()[1];
  // The corrupt commit of /b named it; the rename moved that uncertainty to /c.
  ASSERT_EQ(c.uncertain().count("/c"), 1u);
  EXPECT_EQ(c.uncertain().at("/c").rfind("MANIFEST:2: ", 0), 0u);
  EXPECT_EQ(c.uncertain().count("/z"), 1u);
}

TEST(ManifestChain, ALaterCommitSettlesAPathACorruptRecordNamed) {
  TempDir dir;
  std::string s = dir.path(), err;
  ASSERT_TRUE(manifest::append_commit(s, "c-1.ckc", test::kFakeId, {entry("/a", 0, 1)}, &err));
  append_raw(s, "commit\tc-2.ckc\t1\t/a\t0\t1\t600\t0\t#0000000000000000\n");
  Catalog c;
  ASSERT_TRUE(c.load(s, &err)) << err;
  EXPECT_EQ(c.uncertain().count("/a"), 1u);
  ASSERT_TRUE(manifest::append_commit(s, "c-3.ckc", test::kFakeId, {entry("/a", 0, 1)}, &err));
  ASSERT_TRUE(c.load(s, &err)) << err;
  EXPECT_TRUE(c.uncertain().empty());
  EXPECT_TRUE(c.chain_breaks().empty());
}

TEST(ManifestChain, OlderFormatRecordsLoadAsBeforeAndCountAsUnchained) {
  TempDir dir;
  std::string s = dir.path(), err;
  write_lines(s, {old_format_line("commit\tc-1.ckc\t2\t/a\t0\t10\t644\t5\t/b\t1\t3\t600\t-1"),
                  old_format_line("rename\t/b\t/c"), old_format_line("chmod\t/c\t640")});
  Catalog c;
  ASSERT_TRUE(c.load(s, &err)) << err;
  EXPECT_TRUE(c.problems().empty()) << c.problems()[0];
  EXPECT_EQ(c.unchained_records(), 3u);
  EXPECT_EQ(c.entries().size(), 2u);
  ASSERT_NE(c.find("/c"), nullptr);
  EXPECT_EQ(c.find("/c")->mode, 0640u);
  EXPECT_FALSE(c.find("/c")->base_id.known());

  // Appending to an older MANIFEST chains from its last record.
  ASSERT_TRUE(manifest::append_unlink(s, "/a", &err)) << err;
  ASSERT_TRUE(c.load(s, &err)) << err;
  EXPECT_TRUE(c.problems().empty()) << c.problems()[0];
  EXPECT_EQ(c.chained_records(), 1u);
  EXPECT_EQ(c.find("/a"), nullptr);

  // An older-format record after chained ones is reported (and still applied).
  append_raw(s, old_format_line("unlink\t/c") + "\n");
  ASSERT_TRUE(c.load(s, &err)) << err;
  ASSERT_EQ(c.chain_breaks().size(), 1u);
  EXPECT_NE(c.chain_breaks()[0].find("MANIFEST:5: record without chain"), std::string::npos);
  EXPECT_EQ(c.find("/c"), nullptr);
}

TEST(ManifestChain, ConcurrentAppendersKeepOneChain) {
  TempDir dir;
  std::string s = dir.path();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&s, t] {
      std::string err;
      for (int i = 0; i < 50; ++i)
        EXPECT_TRUE(
            manifest::append_unlink(s, "/t" + std::to_string(t) + "/" + std::to_string(i), &err))
            << err;
    });
  for (std::thread& th : threads) th.join();
  Catalog c;
  std::string err;
  ASSERT_TRUE(c.load(s, &err)) << err;
  EXPECT_EQ(c.chained_records(), 200u);
  EXPECT_TRUE(c.problems().empty()) << c.problems()[0];
}

// A member whose appender died before it answered appends its records itself "unless
// there": records the dead appender put in after the member's known end are not appended
// twice (a duplicate commit record would replay twice and count as two versions).
TEST(ManifestChain, RecordsAlreadyThereAfterTheKnownEndAreNotAppendedTwice) {
  TempDir dir;
  std::string s = dir.path(), err;
  ASSERT_TRUE(manifest::append_unlink(s, "/before", &err)) << err;
  const uint64_t known = manifest_text(s).size();
  const manifest::Records mine = {{"unlink", "/m/a"}, {"rename", "/m/b", "/m/c"}};
  // The appender appended them, then another node's record came.
  ASSERT_TRUE(manifest::append_here(s, mine, 0, nullptr, &err)) << err;
  ASSERT_TRUE(manifest::append_unlink(s, "/other", &err)) << err;
  const std::string was = manifest_text(s);
  uint64_t end = 0;
  ASSERT_TRUE(manifest::append_here(s, mine, known, &end, &err, true)) << err;
  EXPECT_EQ(manifest_text(s), was) << "appended twice";
  EXPECT_EQ(end, was.size());
  // Only after the known end: the same records before it are an earlier change.
  ASSERT_TRUE(manifest::append_here(s, mine, manifest_text(s).size(), &end, &err, true)) << err;
  EXPECT_GT(manifest_text(s).size(), was.size()) << "not appended";
  // Not all of them there, or not one after the other: appended.
  const std::string was2 = manifest_text(s);
  const manifest::Records partly = {{"unlink", "/m/a"}, {"unlink", "/m/z"}};
  ASSERT_TRUE(manifest::append_here(s, partly, known, &end, &err, true)) << err;
  EXPECT_GT(manifest_text(s).size(), was2.size()) << "a record not there was not appended";
  Catalog c;
  ASSERT_TRUE(c.load(s, &err)) << err;
  EXPECT_TRUE(c.problems().empty()) << c.problems()[0];
  EXPECT_EQ(c.chained_records(), 8u);
}

TEST(ManifestChain, EncodeDecodeRoundTrip) {
  namespace mr = manifest_record;
  uint64_t sum = 0;
  std::string line = mr::encode_line({"rename", "/a\tb%", "/@0123456789abcdef"}, 42, &sum);
  ASSERT_EQ(line.back(), '\n');
  line.pop_back();
  mr::DecodedLine d = mr::decode_line(line);
  EXPECT_EQ(d.status, mr::DecodedLine::Status::kOk);
  EXPECT_TRUE(d.chained);
  EXPECT_EQ(d.checksum, sum);
  EXPECT_EQ(d.fields, (std::vector<std::string>{"rename", "/a\tb%", "/@0123456789abcdef"}));
  EXPECT_EQ(d.chain, mr::chain_of(d.body, 42));
  EXPECT_NE(d.chain, mr::chain_of(d.body, 43));
}

// A container under another container's name is refused by every reader (materialize is
// what the CLI's restore and the forwarder's reads use), with an error that says so.
TEST(ManifestChain, ASwappedContainerIsRefusedNotRead) {
  TempDir dir;
  std::string s = dir.path(), err;
  std::vector<test::TestFile> fa = {{"/d/a", test::random_bytes(5000, 1), {}, 0}};
  std::vector<test::TestFile> fb = {{"/d/b", test::random_bytes(5000, 2), {}, 0}};
  ASSERT_TRUE(test::build_container(s + "/a.ckc", fa, 1, 1000, "raw", &err)) << err;
  ASSERT_TRUE(test::build_container(s + "/b.ckc", fb, 1, 1000, "raw", &err)) << err;
  ASSERT_TRUE(manifest::append_commit(s, "a.ckc", {entry("/d/a", 0, 5000)}, &err)) << err;
  ASSERT_TRUE(manifest::append_commit(s, "b.ckc", {entry("/d/b", 0, 5000)}, &err)) << err;
  ASSERT_EQ(::rename((s + "/a.ckc").c_str(), (s + "/t").c_str()), 0);
  ASSERT_EQ(::rename((s + "/b.ckc").c_str(), (s + "/a.ckc").c_str()), 0);
  ASSERT_EQ(::rename((s + "/t").c_str(), (s + "/b.ckc").c_str()), 0);
  Catalog c;
  ASSERT_TRUE(c.load(s, &err)) << err;
  test::TempDir out;
  int fd = ::open((out / "a").c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(materialize_entry(s, *c.find("/d/a"), fd, &err));
  EXPECT_NE(err.find("not the container the MANIFEST recorded"), std::string::npos) << err;
  ::close(fd);
}

TEST(ManifestChain, AppendingForAMissingContainerFails) {
  TempDir dir;
  std::string s = dir.path(), err;
  EXPECT_FALSE(manifest::append_commit(s, "none.ckc", {entry("/a", 0, 1)}, &err));
  EXPECT_NE(err.find("none.ckc"), std::string::npos) << err;
  EXPECT_FALSE(manifest::append_commit(s, "x.ckc", ContainerIdentity{}, {entry("/a", 0, 1)}, &err));
}

}  // namespace
}  // namespace ckptfwd

namespace ckptfwd {
// The tail records what the latest append left: records cut off the end of the MANIFEST
// (which the chain of what is left cannot show) and a rewritten last record are named.
TEST(ManifestTail, TellsRecordsCutOffTheEndAndARewrittenLastRecord) {
  test::TempDir dir;
  std::string s = dir / "store", err, problem;
  ASSERT_TRUE(manifest::ensure_store(s, &err)) << err;
  EXPECT_TRUE(manifest::check_tail(s, &problem)) << "no tail yet: nothing to say";
  for (const char* p : {"/ck/a", "/ck/b", "/ck/c"})
    ASSERT_TRUE(manifest::append_unlink(s, p, &err));
  EXPECT_TRUE(manifest::check_tail(s, &problem)) << problem;
  std::string m = s + "/MANIFEST";
  std::string text;
  {
    std::ifstream in(m, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  size_t last = text.rfind('\n', text.size() - 2) + 1;
  {  // the last record cut off
    std::ofstream out(m, std::ios::binary | std::ios::trunc);
    out << text.substr(0, last);
  }
  EXPECT_FALSE(manifest::check_tail(s, &problem));
  EXPECT_NE(problem.find("cut off its end"), std::string::npos) << problem;
  {  // ... and another record appended in its place by hand (same length or longer)
    std::ofstream out(m, std::ios::binary | std::ios::app);
    out << text.substr(last, text.size() - last - 3) << "zz\n";
  }
  EXPECT_FALSE(manifest::check_tail(s, &problem));
  EXPECT_NE(problem.find("not the one appended there"), std::string::npos) << problem;
}

// A node's later `create` of a new file (fsync'd again, or closed after an fsync) replaces
// its earlier one: a file that shrank between them comes back at its new size. Another
// node's `create` of the same file still stacks (each node holds only its own bytes).
TEST(CatalogCreate, ALaterCreateOfTheSameNodeReplacesItsEarlierOne) {
  Catalog c;
  c.apply_create("c-n1-100-0.ckc", {entry("/ck/f", 0, 100000)});
  c.apply_create("c-n1-200-1.ckc", {entry("/ck/f", 0, 50000)});
  const CatalogEntry* f = c.find("/ck/f");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->container, "c-n1-200-1.ckc");
  EXPECT_TRUE(f->overlays.empty());
  EXPECT_EQ(f->size, 50000u);

  // Two nodes (one with '-' in its name): the other node's create stacks, and a later
  // create of that node replaces its own layer in place.
  c.apply_create("c-node-b-300-0.ckc", {entry("/ck/f", 0, 70000)});
  ASSERT_EQ(c.find("/ck/f")->overlays.size(), 1u);
  EXPECT_EQ(c.find("/ck/f")->size, 70000u);
  c.apply_create("c-node-b-400-1.ckc", {entry("/ck/f", 0, 60000)});
  f = c.find("/ck/f");
  ASSERT_EQ(f->overlays.size(), 1u);
  EXPECT_EQ(f->overlays[0].container, "c-node-b-400-1.ckc");
  EXPECT_EQ(f->size, 60000u);
  EXPECT_EQ(f->container, "c-n1-200-1.ckc");

  // Names not of the forwarder's form never count as one node's.
  Catalog d;
  d.apply_create("c-1.ckc", {entry("/ck/g", 0, 10)});
  d.apply_create("c-2.ckc", {entry("/ck/g", 0, 5)});
  EXPECT_EQ(d.find("/ck/g")->overlays.size(), 1u);
  EXPECT_EQ(d.find("/ck/g")->size, 10u);
}
}  // namespace ckptfwd
