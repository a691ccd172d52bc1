// Misspelt settings are said, not silently ignored (common/setting_names.h): every
// CKPTFWD_* name the sources read is known; a near miss gets a did-you-mean; a job
// script's own CKPTFWD_* variable, far from every name, is left alone; a key of
// CKPTFWD_CONFIG's file that is no setting is a warning, the library's keys load.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/setting_names.h"

namespace ckptfwd {
namespace {

namespace fs = std::filesystem;

// Every "CKPTFWD_NAME" string in src/ and tools/ckptfwd/, and every key the forwarder's
// settings (common/config.cc) match.
std::set<std::string> names_in_sources() {
  std::set<std::string> out;
  const std::regex literal(R"re("CKPTFWD_([A-Z][A-Z0-9_]*)")re");
  const std::regex key(R"re(key == "([A-Z][A-Z0-9_]*)")re");
  for (const char* dir : {"src", "tools/ckptfwd"}) {
    for (const auto& e : fs::recursive_directory_iterator(fs::path(CKPTFWD_SOURCE_DIR) / dir)) {
      const std::string ext = e.path().extension();
      if (ext != ".cc" && ext != ".h") continue;
      std::ifstream in(e.path());
      std::stringstream ss;
      ss << in.rdbuf();
      const std::string text = ss.str();
      const bool settings = e.path().filename() == "config.cc";
      for (const std::regex* re : {&literal, &key}) {
        if (re == &key && !settings) continue;
        for (std::sregex_iterator it(text.begin(), text.end(), *re), end; it != end; ++it)
          out.insert((*it)[1]);
      }
    }
  }
  return out;
}

TEST(SettingNames, EveryNameTheSourcesReadIsKnown) {
  std::set<std::string> names = names_in_sources();
  EXPECT_GT(names.size(), 40u);
  for (const std::string& n : names) EXPECT_TRUE(is_setting_name(n)) << "CKPTFWD_" << n;
}

TEST(SettingNames, ANearMissGetsTheNameAndAFarOneNothing) {
  EXPECT_EQ(near_setting_name("KEPP"), "KEEP");
  EXPECT_EQ(near_setting_name("kepp"), "KEEP");
  EXPECT_EQ(near_setting_name("STAT_FILE"), "STATS_FILE");
  EXPECT_EQ(near_setting_name("CAPUTRE"), "CAPTURE");
  EXPECT_EQ(near_setting_name("KEEP"), "");      // a setting itself
  EXPECT_EQ(near_setting_name("HOME"), "");      // the module files' and examples' own
  EXPECT_EQ(near_setting_name("BUILD"), "");     // the tests' own
  EXPECT_EQ(near_setting_name("H5INFER"), "");   // the HDF5 tests' own (2 edits from INFER)
  EXPECT_EQ(near_setting_name("JOB_NAME"), "");  // far from every name: a script's own
  EXPECT_EQ(near_setting_name("X"), "");
}

// (the CKPTFWD_* variables of whoever runs the tests set aside meanwhile)
class ConfigWarnings : public ::testing::Test {
 protected:
  void SetUp() override {
    for (char** e = environ; *e; ++e)
      if (!strncmp(*e, "CKPTFWD_", 8)) saved_.push_back(*e);
    for (const std::string& kv : saved_) unsetenv(kv.substr(0, kv.find('=')).c_str());
  }
  void TearDown() override {
    unsetenv("CKPTFWD_KEPP");
    unsetenv("CKPTFWD_HOME");
    unsetenv("CKPTFWD_CONFIG");
    for (const std::string& kv : saved_)
      setenv(kv.substr(0, kv.find('=')).c_str(), kv.substr(kv.find('=') + 1).c_str(), 1);
    if (!file_.empty()) fs::remove(file_);
  }
  std::vector<std::string> saved_;
  std::string write_file(const std::string& text) {
    file_ = fs::temp_directory_path() / ("ckptfwd-config-" + std::to_string(getpid()));
    std::ofstream(file_) << text;
    return file_;
  }
  std::string file_;
};

TEST_F(ConfigWarnings, AMisspeltVariableIsSaidAndAScriptsOwnIsNot) {
  setenv("CKPTFWD_KEPP", "2", 1);
  setenv("CKPTFWD_HOME", "/opt/ckptfwd", 1);
  Config c;
  std::string err;
  ASSERT_TRUE(Config::load(c, &err)) << err;
  ASSERT_EQ(c.setting_warnings.size(), 1u);
  EXPECT_EQ(c.setting_warnings[0],
            "CKPTFWD_KEPP is not a setting (did you mean CKPTFWD_KEEP?): ignored");
  EXPECT_EQ(c.keep, 0);
}

TEST_F(ConfigWarnings, AFileKeyThatIsNoSettingIsSaidAndTheLibrarysKeysLoad) {
  setenv("CKPTFWD_CONFIG",
         write_file("keep = 3\nearly_start = 0\nmtbf = 24h\nkepp = 2\nfoo = 1\n").c_str(), 1);
  Config c;
  std::string err;
  ASSERT_TRUE(Config::load(c, &err)) << err;
  EXPECT_EQ(c.keep, 3);
  ASSERT_EQ(c.setting_warnings.size(), 2u);
  EXPECT_EQ(c.setting_warnings[0],
            file_ + ":4: 'kepp' is not a setting (did you mean KEEP?): ignored");
  EXPECT_EQ(c.setting_warnings[1], file_ + ":5: 'foo' is not a setting: ignored");
  // A bad value of a setting is still an error naming it.
  setenv("CKPTFWD_CONFIG", write_file("keep = many\n").c_str(), 1);
  Config bad;
  EXPECT_FALSE(Config::load(bad, &err));
  EXPECT_NE(err.find(":1: "), std::string::npos) << err;
}

}  // namespace
}  // namespace ckptfwd
