// interpose/setup/trust.h: what the library accepts from a session directory and a forwarder
// (docs/semantics.md, "Other users on the node").
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "interpose/setup/trust.h"

namespace ckptfwd::interpose {
namespace {

TEST(StagedPath, OnlyPlainNamesDirectlyInTheSessionDir) {
  const char* dir = "/dev/shm/ckptfwd-0-j-n";
  EXPECT_TRUE(staged_path_inside("/dev/shm/ckptfwd-0-j-n/v1.data", dir));
  EXPECT_TRUE(staged_path_inside("/dev/shm/ckptfwd-0-j-n/r0123abcd.data", dir));
  for (const char* bad :
       {"/home/victim/.profile", "/dev/shm/ckptfwd-0-j-n/../x", "/dev/shm/ckptfwd-0-j-n/..",
        "/dev/shm/ckptfwd-0-j-n/.", "/dev/shm/ckptfwd-0-j-n/", "/dev/shm/ckptfwd-0-j-n",
        "/dev/shm/ckptfwd-0-j-n/sub/v1.data", "/dev/shm/ckptfwd-0-j-nX/v1",
        "dev/shm/ckptfwd-0-j-n/v1.data", ""})
    EXPECT_FALSE(staged_path_inside(bad, dir)) << bad;
  EXPECT_FALSE(staged_path_inside("/x/v1.data", ""));
}

TEST(SessionDir, OursAndPrivateOnly) {
  char tmpl[] = "/tmp/ckf-trust.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string base = tmpl;
  char why[512];
  std::string dir = base + "/s";
  EXPECT_EQ(check_session_dir(dir.c_str(), why, sizeof(why)), DirCheck::kMissing);
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  EXPECT_EQ(check_session_dir(dir.c_str(), why, sizeof(why)), DirCheck::kOurs) << why;
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  EXPECT_EQ(check_session_dir(dir.c_str(), why, sizeof(why)), DirCheck::kRefused);
  EXPECT_NE(std::string(why).find(dir), std::string::npos) << why;
  EXPECT_NE(std::string(why).find("Fix: remove it"), std::string::npos) << why;
  ASSERT_EQ(chmod(dir.c_str(), 0700), 0);
  std::string link = base + "/l";
  ASSERT_EQ(symlink(dir.c_str(), link.c_str()), 0);
  EXPECT_EQ(check_session_dir(link.c_str(), why, sizeof(why)), DirCheck::kRefused);
  EXPECT_NE(std::string(why).find("symbolic link"), std::string::npos) << why;
  unlink(link.c_str());
  rmdir(dir.c_str());
  rmdir(base.c_str());
}

}  // namespace
}  // namespace ckptfwd::interpose
