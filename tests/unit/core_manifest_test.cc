// Manifest journal and catalog replay: records, renames, unlinks, hostile path bytes,
// torn and corrupt lines.
#include <gtest/gtest.h>

#include "common/manifest.h"
#include "core_test_util.h"

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
  ASSERT_TRUE(
      manifest::append_commit(s, "c-1.ckc", {entry("/ck/a", 0, 10), entry("/ck/b", 1, 20)}, &err))
      << err;
  ASSERT_TRUE(manifest::append_commit(s, "c-2.ckc", {entry("/ck/a", 0, 11)}, &err)) << err;
  ASSERT_TRUE(manifest::append_rename(s, "/ck/b", "/ck/b.old", &err)) << err;
  ASSERT_TRUE(manifest::append_commit(s, "c-3.ckc", {entry("/ck/tmp", 0, 30)}, &err)) << err;
  ASSERT_TRUE(manifest::append_rename(s, "/ck/tmp", "/ck/a", &err)) << err;  // replaces a
  ASSERT_TRUE(manifest::append_commit(s, "c-4.ckc", {entry("/ck/gone", 0, 1)}, &err)) << err;
  ASSERT_TRUE(manifest::append_unlink(s, "/ck/gone", &err)) << err;
  ASSERT_TRUE(manifest::append_unlink(s, "/never/existed", &err)) << err;
  ASSERT_TRUE(manifest::append_commit(s, "c-2.ckc", {entry("/ck/z", 3, 5)}, &err)) << err;

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

  // Every line ends in the checksum mark.
  std::string text = manifest_text(s);
  EXPECT_EQ(text.find("commit\tc-1.ckc\t2\t/ck/a\t0\t10\t600\t-5\t/ck/b\t1\t20\t600\t-5\t#"), 0u)
      << text;
}

TEST(Manifest, ChmodRecordsChangeTheModeOfLiveEntriesOnReplay) {
  TempDir dir;
  std::string s = dir.path(), err;
  ASSERT_TRUE(
      manifest::append_commit(s, "c-1.ckc", {entry("/ck/a", 0, 10), entry("/ck/b", 1, 20)}, &err))
      << err;
  ASSERT_TRUE(manifest::append_chmod(s, "/ck/a", 0755, &err)) << err;
  ASSERT_TRUE(manifest::append_chmod(s, "/ck/missing", 0700, &err)) << err;  // no-op
  ASSERT_TRUE(manifest::append_rename(s, "/ck/b", "/ck/c", &err)) << err;
  ASSERT_TRUE(manifest::append_chmod(s, "/ck/c", 0440, &err)) << err;
  // A later commit of the path brings its own mode.
  ASSERT_TRUE(manifest::append_commit(s, "c-2.ckc", {entry("/ck/d", 0, 1)}, &err)) << err;
  ASSERT_TRUE(manifest::append_chmod(s, "/ck/d", 0644, &err)) << err;
  ASSERT_TRUE(manifest::append_commit(s, "c-3.ckc", {entry("/ck/d", 0, 2)}, &err)) << err;
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
  EXPECT_NE(manifest_text(s).find("chmod\t/ck/a\t755\t#"), std::string::npos);
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
  ASSERT_TRUE(manifest::append_commit(s, "we\tird%.ckc", files, &err)) << err;
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
  ASSERT_TRUE(manifest::append_commit(s, "c-1.ckc", {entry("/a", 0, 1)}, &err));
  append_raw(s, "commit\tc-2.ckc\t1\t/b\t0\t1\t6");  // a crash mid-write
  Catalog c;
  ASSERT_TRUE(c.load(s, &err));
  EXPECT_EQ(c.entries().size(), 1u);
  ASSERT_EQ(c.problems().size(), 1u);
  EXPECT_EQ(c.problems()[0].rfind("MANIFEST:2: ", 0), 0u) << c.problems()[0];

  // The next record starts a fresh line instead of gluing onto the torn one.
  ASSERT_TRUE(manifest::append_commit(s, "c-3.ckc", {entry("/c", 0, 1)}, &err)) << err;
  ASSERT_TRUE(c.load(s, &err));
  EXPECT_NE(c.find("/a"), nullptr);
  EXPECT_EQ(c.find("/b"), nullptr);
  EXPECT_NE(c.find("/c"), nullptr);
  EXPECT_EQ(c.problems().size(), 1u);
}

TEST(Manifest, CorruptAndForeignLinesAreReportedAndTheRestIsKept) {
  TempDir dir;
  std::string s = dir.path(), err;
  ASSERT_TRUE(manifest::append_commit(s, "c-1.ckc", {entry("/a", 0, 1)}, &err));
  std::string text = manifest_text(s);
  // A flipped byte in the path: the checksum no longer matches.
  std::string flipped = text;
  flipped[flipped.find("/a")] = '/';
  flipped[flipped.find("/a") + 1] = 'b';
  append_raw(s, flipped.substr(0));  // line 2: bad checksum
  append_raw(s, "hello world\n");    // line 3: no checksum
  append_raw(s, "\n");               // empty: ignored silently
  ASSERT_TRUE(manifest::append_commit(s, "c-2.ckc", {entry("/d", 0, 1)}, &err));  // line 5
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
  ASSERT_TRUE(manifest::append_commit(a.path(), "c.ckc", {entry("/a", 0, 1)}, &err));
  Catalog c;
  ASSERT_TRUE(c.load(a.path(), &err));
  ASSERT_TRUE(c.load(b.path(), &err));
  EXPECT_TRUE(c.entries().empty());
  EXPECT_TRUE(c.containers().empty());
}

}  // namespace
}  // namespace ckptfwd
