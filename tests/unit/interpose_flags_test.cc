// fopen modes -> open flags, and the flags used to reopen a staged file.
#include <fcntl.h>
#include <gtest/gtest.h>

#include "interpose/setup/open_flags.h"

using namespace ckptfwd::interpose;

namespace {

TEST(InterposeFlags, FopenModesMatchGlibc) {
  EXPECT_EQ(fopen_mode_to_flags("r"), O_RDONLY);
  EXPECT_EQ(fopen_mode_to_flags("rb"), O_RDONLY);
  EXPECT_EQ(fopen_mode_to_flags("r+"), O_RDWR);
  EXPECT_EQ(fopen_mode_to_flags("w"), O_WRONLY | O_CREAT | O_TRUNC);
  EXPECT_EQ(fopen_mode_to_flags("wb+"), O_RDWR | O_CREAT | O_TRUNC);
  EXPECT_EQ(fopen_mode_to_flags("a"), O_WRONLY | O_CREAT | O_APPEND);
  EXPECT_EQ(fopen_mode_to_flags("a+"), O_RDWR | O_CREAT | O_APPEND);
  EXPECT_EQ(fopen_mode_to_flags("wx"), O_WRONLY | O_CREAT | O_TRUNC | O_EXCL);
  EXPECT_EQ(fopen_mode_to_flags("re"), O_RDONLY | O_CLOEXEC);
  EXPECT_EQ(fopen_mode_to_flags("w,ccs=UTF-8"), O_WRONLY | O_CREAT | O_TRUNC);
  EXPECT_EQ(fopen_mode_to_flags("r,ccs=x+"), O_RDONLY);  // nothing after ',' counts
}

TEST(InterposeFlags, BadModesAreRejected) {
  EXPECT_EQ(fopen_mode_to_flags(""), -1);
  EXPECT_EQ(fopen_mode_to_flags("x"), -1);
  EXPECT_EQ(fopen_mode_to_flags("+r"), -1);
  EXPECT_EQ(fopen_mode_to_flags(nullptr), -1);
}

TEST(InterposeFlags, StagedFlagsDropCreationButKeepAccessAppendCloexec) {
  int app = O_RDWR | O_CREAT | O_EXCL | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_DIRECT;
  int s = staged_open_flags(app);
  EXPECT_EQ(s & O_ACCMODE, O_RDWR);
  EXPECT_TRUE(s & O_APPEND);
  EXPECT_TRUE(s & O_CLOEXEC);
  EXPECT_FALSE(s & (O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW | O_DIRECT));
  EXPECT_EQ(staged_open_flags(O_WRONLY), O_WRONLY);
}

TEST(InterposeFlags, DirectoriesPathHandlesAndTmpfilesAreNotCaptured) {
  EXPECT_TRUE(open_is_capturable(O_WRONLY | O_CREAT));
  EXPECT_FALSE(open_is_capturable(O_RDONLY | O_DIRECTORY));
  EXPECT_FALSE(open_is_capturable(O_PATH));
  EXPECT_FALSE(open_is_capturable(O_TMPFILE | O_WRONLY));
}

TEST(InterposeFlags, ModeArgumentOnlyWithCreateOrTmpfile) {
  EXPECT_TRUE(open_needs_mode(O_CREAT));
  EXPECT_TRUE(open_needs_mode(O_TMPFILE | O_RDWR));
  EXPECT_FALSE(open_needs_mode(O_RDWR | O_TRUNC));
  EXPECT_FALSE(open_needs_mode(O_DIRECTORY));
}

TEST(InterposeFlags, StagedFopenModeDropsExclusive) {
  char out[16];
  ASSERT_TRUE(staged_fopen_mode("wxe", out, sizeof(out)));
  EXPECT_STREQ(out, "we");
  ASSERT_TRUE(staged_fopen_mode("a+", out, sizeof(out)));
  EXPECT_STREQ(out, "a+");
  ASSERT_TRUE(staged_fopen_mode("w,ccs=x", out, sizeof(out)));
  EXPECT_STREQ(out, "w,ccs=x");  // 'x' after ',' is part of the encoding name
  EXPECT_FALSE(staged_fopen_mode("w,ccs=UTF-8", out, 4));
}

}  // namespace
