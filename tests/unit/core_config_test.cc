// Config: sizes with suffixes, key validation, the environment overriding defaults.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>

#include "common/config.h"
#include "common/lossy_rules.h"

namespace ckptfwd {
namespace {

TEST(ParseSize, AcceptsPlainNumbersAndBinarySuffixes) {
  struct Case {
    const char* in;
    uint64_t want;
  } cases[] = {{"0", 0},
               {"4096", 4096},
               {"1K", 1024},
               {"64M", 64ull << 20},
               {"64m", 64ull << 20},
               {"2G", 2ull << 30},
               {"1T", 1ull << 40},
               {"3KiB", 3072},
               {"5MB", 5ull << 20},
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
  EXPECT_TRUE(c.set("SNAPSHOT_READ_MAX", "16M", &err));
  EXPECT_EQ(c.snapshot_read_max, 16ull << 20);
  EXPECT_TRUE(c.direct_write);
  EXPECT_TRUE(c.set("DIRECT_WRITE", "0", &err));
  EXPECT_FALSE(c.direct_write);
  // The one vocabulary of switches (wire/settings_table.h), as the library reads its own.
  EXPECT_TRUE(c.set("DIRECT_WRITE", "yes", &err)) << err;
  EXPECT_TRUE(c.direct_write);
  EXPECT_FALSE(c.set("DIRECT_WRITE", "maybe", &err));
  EXPECT_NE(err.find("DIRECT_WRITE"), std::string::npos) << err;
  EXPECT_TRUE(c.direct_read);
  EXPECT_TRUE(c.set("DIRECT_READ", "0", &err));
  EXPECT_FALSE(c.direct_read);
  EXPECT_TRUE(c.set("DIRECT_READ", "On", &err)) << err;
  EXPECT_TRUE(c.direct_read);
  EXPECT_FALSE(c.set("DIRECT_READ", "2", &err));
  EXPECT_NE(err.find("DIRECT_READ"), std::string::npos) << err;
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

// CKPTFWD_WRITERS unset: a quarter of the cores, 2..16; set: as given.
TEST(Config, WritersDefaultFollowsTheCores) {
  EXPECT_EQ(Config::default_writers(1), 2);
  EXPECT_EQ(Config::default_writers(2), 2);
  EXPECT_EQ(Config::default_writers(12), 3);
  EXPECT_EQ(Config::default_writers(64), 16);
  EXPECT_EQ(Config::default_writers(256), 16);
  unsetenv("CKPTFWD_WRITERS");
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  ASSERT_EQ(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
  Config c;
  std::string err;
  ASSERT_TRUE(Config::load(c, &err)) << err;
  EXPECT_EQ(c.writers, Config::default_writers(CPU_COUNT(&cpus)));
  setenv("CKPTFWD_WRITERS", "5", 1);
  Config d;
  ASSERT_TRUE(Config::load(d, &err)) << err;
  EXPECT_EQ(d.writers, 5);
  unsetenv("CKPTFWD_WRITERS");
}

// A configuration file may hold the library's own settings: the forwarder skips them
// (an unknown name would stop it, and the application would write directly).
TEST(Config, AFileWithTheLibrarysSettingsLoads) {
  char tmpl[] = "/tmp/ckcfg-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  const char text[] = "leased_open = 0\nexit_wait = 1\nlevel = 5\n";
  ASSERT_EQ(write(fd, text, sizeof(text) - 1), static_cast<ssize_t>(sizeof(text) - 1));
  close(fd);
  setenv("CKPTFWD_CONFIG", tmpl, 1);
  Config c;
  std::string err;
  EXPECT_TRUE(Config::load(c, &err)) << err;
  EXPECT_EQ(c.level, 5);
  unsetenv("CKPTFWD_CONFIG");
  unlink(tmpl);
}

// Bad setting values: junk, signs, spaces, out-of-range numbers and unknown names are
// rejected with a message naming the key, the value and what is expected.
TEST(Config, RejectsInvalidValuesNamingKeyValueAndExpectation) {
  struct Case {
    const char* key;
    const char* value;
  } cases[] = {{"LEVEL", "abc"},
               {"LEVEL", "3x"},
               {"LEVEL", "-1"},
               {"LEVEL", "99"},
               {"LEVEL", " 5"},
               {"LEVEL", "+5"},
               {"LEVEL", ""},
               {"WRITERS", "0"},
               {"WRITERS", "99999999999"},
               {"CODEC", "lz4"},
               {"SCHEME", "fast"},
               {"CHUNK", "1K"},
               {"CHUNK", "12Q"},
               {"STAGE_LIMIT", "-5"},
               {"BATCH_BYTES", "1.5G"},
               {"BATCH_WINDOW_MS", "1e3"},
               {"WAVE_WINDOW_MS", "3s"},
               {"WAVE_WINDOW_MS", "600001"},
               {"IDLE_EXIT", "-1"},
               {"KEEP", "many"},
               {"GROUP_SIZE", "+3"},
               {"BLOCK", "1"},
               {"SMALL_VAR", "2G"},
               {"CODEC_MIN_MBPS", "fast"},
               {"LOSSY", "temperature"},
               {"LOSSY", "t*=abs:"},
               {"LOSSY", "t*=abs:-1"},
               {"LOSSY", "t*=abs:nan"},
               {"LOSSY", "t*=rel:2"},
               {"LOSSY", "t*=max:0.1"},
               {"LOSSY", "=abs:0.1"},
               {"SYNC_LEVEL", "-8"},
               {"SYNC_LEVEL", "20"},
               {"SYNC_LEVEL", "+1"},
               {"SYNC_LEVEL", "--1"},
               {"SYNC_LEVEL", "-"},
               {"SYNC_LEVEL", "fast"},
               {"PREFETCH", "lots"},
               {"SNAPSHOT_READ_MAX", "big"},
               {"RESTORE_THREADS", "0"},
               {"RESTORE_THREADS", "65"},
               {"LOG_LEVEL", "verbose"}};
  for (const Case& c : cases) {
    Config cfg;
    std::string err;
    EXPECT_FALSE(cfg.set(c.key, c.value, &err)) << c.key << "=" << c.value;
    EXPECT_NE(err.find(std::string("CKPTFWD_") + c.key), std::string::npos) << err;
    EXPECT_NE(err.find(std::string("'") + c.value + "'"), std::string::npos) << err;
    EXPECT_NE(err.find("expected"), std::string::npos) << err;
  }
}

TEST(Config, AcceptsPlainNumbersAtTheBounds) {
  Config c;
  std::string err;
  EXPECT_TRUE(c.set("LEVEL", "0", &err)) << err;
  EXPECT_TRUE(c.set("LEVEL", "19", &err)) << err;
  EXPECT_EQ(c.level, 19);
  EXPECT_TRUE(c.set("IDLE_EXIT", "0", &err)) << err;
  EXPECT_TRUE(c.set("WRITERS", "256", &err)) << err;
  EXPECT_TRUE(c.set("WAVE_WINDOW_MS", "0", &err)) << err;
  EXPECT_TRUE(c.set("WAVE_WINDOW_MS", "600000", &err)) << err;
  EXPECT_EQ(c.wave_window_ms, 600000);
  EXPECT_FALSE(c.set("WRITERS", "257", &err));
  EXPECT_EQ(c.sync_level, -1);  // the default: zstd's first fast level
  EXPECT_TRUE(c.set("SYNC_LEVEL", "-7", &err)) << err;
  EXPECT_EQ(c.sync_level, -7);
  EXPECT_TRUE(c.set("SYNC_LEVEL", "19", &err)) << err;
  EXPECT_EQ(c.sync_level, 19);
  EXPECT_TRUE(c.set("SYNC_LEVEL", "0", &err)) << err;
  EXPECT_EQ(c.sync_level, 0);
}

// The forwarder changes directory to `/` after reading its settings: path settings are
// made absolute against the cwd of the process reading them.
TEST(Config, PathSettingsBecomeAbsoluteAgainstTheCwd) {
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  std::string here = std::string(cwd) == "/" ? "" : cwd;
  Config c;
  std::string err;
  EXPECT_TRUE(c.set("STORE", "rel/store", &err)) << err;
  EXPECT_EQ(c.store, here + "/rel/store");
  EXPECT_TRUE(c.set("STATS_FILE", "./s/../stats.jsonl", &err)) << err;
  EXPECT_EQ(c.stats_file, here + "/stats.jsonl");
  EXPECT_TRUE(c.set("LOG", "x.log", &err)) << err;
  EXPECT_EQ(c.log, here + "/x.log");
  EXPECT_TRUE(c.set("LOG", "stderr", &err)) << err;
  EXPECT_EQ(c.log, "stderr");
  EXPECT_TRUE(c.set("LOG", "syslog", &err)) << err;
  EXPECT_EQ(c.log, "syslog");
  EXPECT_TRUE(c.set("STORE", "/abs//store/", &err)) << err;
  EXPECT_EQ(c.store, "/abs/store");
  EXPECT_TRUE(c.set("STORE", "", &err)) << err;
  EXPECT_EQ(c.store, "");
}

}  // namespace
TEST(Config, LossyRulesMatchTheFirstGlobAndDefaultToExact) {
  Config cfg;
  std::string err;
  EXPECT_TRUE(cfg.lossy.empty());  // nothing lossy without opt-in
  ASSERT_TRUE(cfg.set("LOSSY", "fields/T_*=abs:0.01,*_F32LE_*=rel:1e-4", &err)) << err;
  std::vector<LossyRule> rules;
  ASSERT_TRUE(parse_lossy_rules(cfg.lossy, rules, &err)) << err;
  ASSERT_EQ(rules.size(), 2u);
  auto t = lossy_rule_for(rules, "fields/T_F64LE_Array3D");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->relative);
  EXPECT_DOUBLE_EQ(t->bound, 0.01);
  auto p = lossy_rule_for(rules, "p_F32LE_Array1D");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->relative);
  EXPECT_FALSE(lossy_rule_for(rules, "p_F64LE_Array1D"));
}

}  // namespace ckptfwd
