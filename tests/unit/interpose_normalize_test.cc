// Path normalisation as the library applies it before matching (table driven).
#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "interpose/setup/capture.h"
#include "wire/session.h"

namespace {

struct Case {
  const char* path;
  const char* base;
  const char* want;
};

TEST(InterposeNormalize, Table) {
  const Case cases[] = {
      {"/a/b/c", nullptr, "/a/b/c"},
      {"/a//b///c/", nullptr, "/a/b/c"},
      {"/a/./b/.", nullptr, "/a/b"},
      {"/a/b/../c", nullptr, "/a/c"},
      {"/../../a", nullptr, "/a"},
      {"/", nullptr, "/"},
      {"/a/..", nullptr, "/"},
      {"ckpt/r0", "/run", "/run/ckpt/r0"},
      {"./r0", "/run/ckpt", "/run/ckpt/r0"},
      {"../ckpt/r0", "/run/other", "/run/ckpt/r0"},
      {"..", "/", "/"},
      {"/abs/ignores/base", "/elsewhere", "/abs/ignores/base"},
  };
  for (const Case& c : cases) {
    char out[PATH_MAX];
    ASSERT_TRUE(ckptfwd::normalize_path(c.path, c.base, out, sizeof(out))) << c.path;
    EXPECT_STREQ(out, c.want) << c.path << " from " << (c.base ? c.base : "(cwd)");
  }
}

TEST(InterposeNormalize, SmallBufferFailsCleanly) {
  char out[4];
  EXPECT_FALSE(ckptfwd::normalize_path("/abcdef", nullptr, out, sizeof(out)));
}

TEST(InterposeNormalize, NormalisedSpellingsOfOnePathAllMatch) {
  static ckptfwd::interpose::CaptureSet c;
  ASSERT_TRUE(c.parse("/run/ckpt/*.bin"));
  for (const char* spelling :
       {"/run/ckpt/r0.bin", "//run/ckpt/./r0.bin", "/run/x/../ckpt/r0.bin"}) {
    char out[PATH_MAX];
    ASSERT_TRUE(ckptfwd::normalize_path(spelling, nullptr, out, sizeof(out)));
    EXPECT_TRUE(c.matches(out)) << spelling;
  }
}

}  // namespace
