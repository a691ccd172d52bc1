// A staged version's .meta (common/staged_meta.h): the texts the forwarder wrote before its
// format moved there come out of format_meta byte for byte, and parse_meta reads them as
// both of its readers did, the forwarder's recovery (forwarder/staging/staging.cc,
// read_meta) and `ckptfwd drain` (tools/ckptfwd/staged_versions.cc): percent-encoded
// paths, state and holders, padding lines, a missing state line, junk.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "common/staged_meta.h"
#include "core_test_util.h"

namespace ckptfwd {
namespace {

// An open version held by two processes, its path needing every escape.
const char* kOpenText =
    "path=/ckpt/a 100%25%0Anew%0Dline=x\nrank=3\nmode=640\npid=77\nstate=open\n"
    "holders=100:2,200:1\n";
// A closed one, shared across nodes, written whole to 4096 bytes.
const char* kClosedText =
    "path=/ckpt/b\nrank=0\nmode=600\npid=5\npartial=1\nextents_unknown=1\ncreated=1\n"
    "whole=4096\nstate=closed\ncloser=100\n";

VersionMeta open_meta() {
  VersionMeta m{"/ckpt/a 100%\nnew\rline=x", 3, 0640, 77};
  m.holders = {{100, 2}, {200, 1}};
  return m;
}

VersionMeta closed_meta() {
  VersionMeta m{"/ckpt/b", 0, 0600, 5};
  m.partial = m.extents_unknown = m.created = true;
  m.whole = 4096;
  m.closed = true;
  m.closer = 100;
  return m;
}

void expect_same(const VersionMeta& got, const VersionMeta& want) {
  EXPECT_EQ(got.path, want.path);
  EXPECT_EQ(got.rank, want.rank);
  EXPECT_EQ(got.mode, want.mode);
  EXPECT_EQ(got.pid, want.pid);
  EXPECT_EQ(got.partial, want.partial);
  EXPECT_EQ(got.extents_unknown, want.extents_unknown);
  EXPECT_EQ(got.created, want.created);
  EXPECT_EQ(got.whole, want.whole);
  EXPECT_EQ(got.closed, want.closed);
  EXPECT_EQ(got.closer, want.closer);
  EXPECT_EQ(got.holders, want.holders);
}

TEST(StagedMeta, WritesTheTextsTheForwarderWrote) {
  EXPECT_EQ(format_meta(open_meta()), kOpenText);
  EXPECT_EQ(format_meta(closed_meta()), kClosedText);
  // Closed: no holders line, whatever holders the version had.
  VersionMeta m = open_meta();
  m.closed = true;
  m.closer = 200;
  EXPECT_EQ(format_meta(m).find("holders="), std::string::npos);
}

TEST(StagedMeta, ReadsThemBack) {
  for (const auto& [text, want] :
       {std::pair{kOpenText, open_meta()}, std::pair{kClosedText, closed_meta()}}) {
    VersionMeta got;
    ASSERT_TRUE(parse_meta(text, got)) << text;
    expect_same(got, want);
    // Padded with empty lines, as an in-place rewrite leaves a shorter text.
    VersionMeta padded;
    ASSERT_TRUE(parse_meta(std::string(text) + "\n\n\n\n", padded));
    expect_same(padded, want);
  }
}

TEST(StagedMeta, PercentDecodingAsBothReadersDid) {
  const std::pair<const char*, const char*> cases[] = {
      {"path=/a%25b", "/a%b"},   {"path=/a%0ab", "/a\nb"},   // either case of hex digit
      {"path=/a%0Db", "/a\rb"},  {"path=/a%zzb", "/a%zzb"},  // not hex: as it is
      {"path=/a%4", "/a%4"},     {"path=/a%41", "/aA"},      // cut short: as it is
      {"path=/a=b%3D", "/a=b="}, {"path=/plain", "/plain"},
  };
  for (const auto& [line, want] : cases) {
    VersionMeta m;
    ASSERT_TRUE(parse_meta(line, m)) << line;
    EXPECT_EQ(m.path, want) << line;
  }
}

TEST(StagedMeta, WhatALineDoesNotSay) {
  // No state line: open. Lines in any order; unknown keys and lines without '=' skipped.
  VersionMeta m;
  ASSERT_TRUE(parse_meta("pid=9\nfuture=thing\nno equals sign\npath=/x\n", m));
  EXPECT_EQ(m.path, "/x");
  EXPECT_EQ(m.pid, 9);
  EXPECT_FALSE(m.closed);
  EXPECT_EQ(m.rank, -1);
  EXPECT_EQ(m.mode, 0644u);
  EXPECT_EQ(m.whole, -1);
  // No path= line: false (both readers took such a .meta as unreadable).
  VersionMeta none;
  EXPECT_FALSE(parse_meta("rank=1\nstate=closed\n", none));
  EXPECT_TRUE(none.closed);
  // A relative path is still a path= line: the forwarder refuses it (read_meta), drain
  // counts the version as readable.
  VersionMeta rel;
  EXPECT_TRUE(parse_meta("path=rel/x\nstate=open\n", rel));
  EXPECT_EQ(rel.path, "rel/x");
  // Junk stops the holders; a bad whole is unknown; mode keeps permission bits only.
  VersionMeta junk;
  ASSERT_TRUE(parse_meta("path=/x\nholders=12:1,zz,13\nwhole=-5\nmode=107777\n", junk));
  EXPECT_EQ(junk.holders, (std::vector<std::pair<long, int>>{{12, 1}}));
  EXPECT_EQ(junk.whole, -1);
  EXPECT_EQ(junk.mode, 07777u);
}

TEST(StagedMeta, ReadsTheFile) {
  test::TempDir dir;
  auto put = [&](const std::string& name, const std::string& text) {
    test::write_all(dir / name, std::vector<uint8_t>(text.begin(), text.end()));
  };
  std::string err;
  VersionMeta m;
  EXPECT_FALSE(read_meta_file(dir / "missing.meta", m, &err));
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
  put("empty.meta", "");
  EXPECT_FALSE(read_meta_file(dir / "empty.meta", m, &err));
  EXPECT_NE(err.find("empty or unreadable"), std::string::npos) << err;
  put("v1.meta", kOpenText);
  ASSERT_TRUE(read_meta_file(dir / "v1.meta", m, &err)) << err;
  expect_same(m, open_meta());
  // Never through a symbolic link.
  ASSERT_EQ(symlink((dir / "v1.meta").c_str(), (dir / "v2.meta").c_str()), 0);
  VersionMeta l;
  EXPECT_FALSE(read_meta_file(dir / "v2.meta", l, &err));
  // Larger than one read (a long holders line).
  VersionMeta many{"/ckpt/c", 1, 0600, 5};
  for (long pid = 1000; pid < 3000; ++pid) many.holders.push_back({pid, 1});
  std::string big = format_meta(many);
  ASSERT_GT(big.size(), 8192u);
  put("v3.meta", big);
  VersionMeta b;
  ASSERT_TRUE(read_meta_file(dir / "v3.meta", b, &err)) << err;
  EXPECT_EQ(b.holders, many.holders);
}

}  // namespace
}  // namespace ckptfwd
