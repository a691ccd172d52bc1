// The HELLO's settings digest (wire/settings_digest.h): the same settings give the same
// number whatever their order and whatever else is in the environment; any CKPTFWD_*
// setting's change changes it; the start's own variables and exec's hand-over do not.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "wire/settings_digest.h"

namespace ckptfwd::wire {
namespace {

uint64_t digest(std::vector<std::string> env, const char* replaced_by = nullptr) {
  std::vector<char*> ptrs;
  for (auto& e : env) ptrs.push_back(e.data());
  ptrs.push_back(nullptr);
  return settings_digest(ptrs.data(), [&](const char* e) -> const char* {
    if (!replaced_by) return nullptr;
    const char* eq = strchr(replaced_by, '=');
    return strncmp(e, replaced_by, static_cast<size_t>(eq - replaced_by) + 1) == 0 ? replaced_by
                                                                                   : nullptr;
  });
}

TEST(SettingsDigest, OrderAndOtherVariablesDoNotCount) {
  uint64_t a = digest({"CKPTFWD_STORE=/s", "PATH=/bin", "CKPTFWD_CODEC=zstd"});
  EXPECT_EQ(a, digest({"CKPTFWD_CODEC=zstd", "CKPTFWD_STORE=/s", "HOME=/root", "PMI_RANK=3"}));
  EXPECT_EQ(a, digest({"CKPTFWD_CODEC=zstd", "CKPTFWD_STORE=/s", "CKPTFWD_ELECTION_FD=3",
                       "CKPTFWD_STARTED_FOR=77", "CKPTFWD_ADOPT=1:2:3", "CKPTFWD_ADOPT_LEASE=9"}));
}

TEST(SettingsDigest, AnySettingChangesIt) {
  uint64_t a = digest({"CKPTFWD_STORE=/s", "CKPTFWD_CODEC=zstd"});
  EXPECT_NE(a, digest({"CKPTFWD_STORE=/t", "CKPTFWD_CODEC=zstd"}));
  EXPECT_NE(a, digest({"CKPTFWD_STORE=/s"}));
  EXPECT_NE(a, digest({"CKPTFWD_STORE=/s", "CKPTFWD_CODEC=zstd", "CKPTFWD_SCHEMA=/x.schema"}));
  EXPECT_NE(digest({}), digest({"CKPTFWD_LEVEL=3"}));
}

TEST(SettingsDigest, AReplacementCountsAsTheForwarderGetsIt) {
  // The library hands on CKPTFWD_STORE made absolute: the digest sees that value.
  EXPECT_EQ(digest({"CKPTFWD_STORE=rel"}, "CKPTFWD_STORE=/cwd/rel"),
            digest({"CKPTFWD_STORE=/cwd/rel"}));
  EXPECT_NE(digest({"CKPTFWD_STORE=rel"}, "CKPTFWD_STORE=/cwd/rel"), digest({"CKPTFWD_STORE=rel"}));
}

TEST(SettingsDigest, FieldRoundTripsAndRejectsOthers) {
  char buf[40];
  ASSERT_TRUE(format_settings(0x0123456789abcdefull, buf, sizeof(buf)));
  EXPECT_STREQ(buf, "env=0123456789abcdef");
  uint64_t d = 5;
  ASSERT_TRUE(parse_settings(buf, d));
  EXPECT_EQ(d, 0x0123456789abcdefull);
  for (const char* bad : {"env=", "env=0123", "env=0123456789abcdeg", "env=0123456789ABCDEF",
                          "lease=", "env=0123456789abcdef0"}) {
    uint64_t keep = 5;
    EXPECT_FALSE(parse_settings(bad, keep)) << bad;
    EXPECT_EQ(keep, 5u);
  }
  volatile size_t small = 8;  // too short for the field (not known when compiling)
  EXPECT_FALSE(format_settings(1, buf, small));
}

}  // namespace
}  // namespace ckptfwd::wire
