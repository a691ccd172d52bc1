// Config: sizes with suffixes, key validation, the environment overriding defaults.
#include <gtest/gtest.h>

#include <cstdlib>

#include "common/config.h"

namespace ckptfwd {
namespace {

TEST(ParseSize, AcceptsPlainNumbersAndBinarySuffixes) {
  struct Case {
    const char* in;
    uint64_t want;
  } cases[] = {{"0", 0},           {"4096", 4096},          {"1K", 1024},
               {"64M", 64ull << 20}, {"64m", 64ull << 20}, {"2G", 2ull << 30},
               {"1T", 1ull << 40}, {"3KiB", 3072},          {"5MB", 5ull << 20},
               {"16777215T", 16777215ull << 40}};
  for (const Case& c : cases) {
    uint64_t v = 12345;
    EXPECT_TRUE(parse_size(c.in, v)) << c.in;
    EXPECT_EQ(v, c.want) << c.in;
  }
}

TEST(ParseSize, RejectsGarbageAndOverflow) {
  for (const char* in : {"", "M", "-1", "1X", "1.5G", " 1", "1 ", "1KK", "1GiBx",
                         "18446744073709551616", "99999999999999999999999", "16777216T"}) {
    uint64_t v = 7;
    EXPECT_FALSE(parse_size(in, v)) << "'" << in << "'";
    EXPECT_EQ(v, 7u) << "output untouched on failure: " << in;
  }
}

TEST(Config, SetValidatesAndNamesTheKey) {
  Config c;
  std::string err;
  EXPECT_TRUE(c.set("CKPTFWD_CODEC", "zlib", &err));
  EXPECT_EQ(c.codec, "zlib");
  EXPECT_TRUE(c.set("chunk", "1M", &err));
  EXPECT_EQ(c.chunk_bytes, 1ull << 20);
  EXPECT_FALSE(c.set("CHUNK", "1K", &err));
  EXPECT_NE(err.find("CHUNK"), std::string::npos) << err;
  EXPECT_FALSE(c.set("CODEC", "lzma", &err));
  EXPECT_NE(err.find("lzma"), std::string::npos) << err;
  EXPECT_FALSE(c.set("WRITERS", "0", &err));
  EXPECT_FALSE(c.set("NO_SUCH_KEY", "1", &err));
  EXPECT_NE(err.find("unknown"), std::string::npos);
}

// Needs src/common/config.cc to use the global ::environ (it declared `extern char**
// environ` inside namespace ckptfwd, an undefined ckptfwd::environ: link error).
TEST(Config, EnvironmentOverridesDefaults) {
  setenv("CKPTFWD_LEVEL", "7", 1);
  setenv("CKPTFWD_SOMETHING_FOR_THE_LIBRARY", "x", 1);  // unknown: ignored
  Config c;
  std::string err;
  EXPECT_TRUE(Config::load(c, &err)) << err;
  EXPECT_EQ(c.level, 7);
  setenv("CKPTFWD_LEVEL", "abc", 1);
  Config d;
  EXPECT_FALSE(Config::load(d, &err));
  EXPECT_NE(err.find("CKPTFWD_LEVEL"), std::string::npos) << err;
  unsetenv("CKPTFWD_LEVEL");
  unsetenv("CKPTFWD_SOMETHING_FOR_THE_LIBRARY");
}

}  // namespace
}  // namespace ckptfwd
