// The settings reference (docs/settings.md) says what the code does: every setting of the
// table (wire/settings.def) has its row there with its default and its readers, and every
// row is a setting; the forwarder's checks (Config::set) take both ends of each range the
// table gives and refuse past them, and each default the table writes is Config's own;
// every setting is read somewhere in the code. Also the settings file's reader
// (wire/setting_value.h): lines, comments, the environment over the file, the last line.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/config.h"
#include "wire/setting_value.h"
#include "wire/settings_table.h"

namespace ckptfwd {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct DocRow {
  std::string dflt, readers;
  int count = 0;
};

std::map<std::string, DocRow> doc_rows() {
  std::map<std::string, DocRow> rows;
  std::istringstream in(read_all(fs::path(CKPTFWD_SOURCE_DIR) / "docs" / "settings.md"));
  const std::regex row(R"re(^\| `CKPTFWD_([A-Z0-9_]+)` \| ([^|]*) \| ([^|]*) \| .*\|$)re");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_match(line, m, row)) {
      DocRow& r = rows[m[1]];
      r.dflt = m[2];
      r.readers = m[3];
      ++r.count;
    }
  return rows;
}

std::string readers_text(unsigned r) {
  std::string out;
  auto add = [&](const char* w) { out += (out.empty() ? "" : ", ") + std::string(w); };
  if (r & wire::kLibrary) add("library");
  if (r & wire::kForwarder) add("forwarder");
  if (r & wire::kCli) add("CLI");
  return out;
}

TEST(SettingsReference, EverySettingHasItsRowAndEveryRowIsASetting) {
  std::map<std::string, DocRow> rows = doc_rows();
  EXPECT_GT(rows.size(), 40u);
  for (const wire::SettingInfo* s = wire::settings_begin(); s != wire::settings_end(); ++s) {
    SCOPED_TRACE(std::string("CKPTFWD_") + s->name);
    auto it = rows.find(s->name);
    ASSERT_NE(it, rows.end()) << "no row in docs/settings.md";
    EXPECT_EQ(it->second.count, 1) << "rows in docs/settings.md";
    EXPECT_EQ(it->second.readers, readers_text(s->readers));
    const std::string d = s->dflt;
    if (d.empty())
      EXPECT_EQ(it->second.dflt.rfind("unset", 0), 0u) << it->second.dflt;
    else if (d[0] != '(')
      EXPECT_EQ(it->second.dflt, "`" + d + "`");
    else
      EXPECT_FALSE(std::regex_match(it->second.dflt, std::regex("`[^`]*`")))
          << "a computed default written as a value: " << it->second.dflt;
  }
  for (const auto& [name, row] : rows)
    EXPECT_NE(wire::find_setting(name.c_str()), nullptr)
        << "docs/settings.md has CKPTFWD_" << name << ", which is no setting";
}

// Both ends of every range the table gives are taken, one past them refused; a switch
// takes the one vocabulary; each default written in the table is Config's.
TEST(SettingsReference, TheForwardersChecksAgreeWithTheTable) {
  int checked = 0;
  for (const wire::SettingInfo* s = wire::settings_begin(); s != wire::settings_end(); ++s) {
    const std::string key = std::string("CKPTFWD_") + s->name;
    if (!Config::is_own_setting(key)) continue;
    SCOPED_TRACE(key);
    ++checked;
    Config c;
    std::string err;
    using K = wire::SettingKind;
    if (s->kind == K::kNumber || s->kind == K::kSize) {
      EXPECT_TRUE(c.set(key, std::to_string(s->lo), &err)) << err;
      if (s->hi != wire::kNoLimit) {
        EXPECT_TRUE(c.set(key, std::to_string(s->hi), &err)) << err;
        EXPECT_FALSE(c.set(key, std::to_string(s->hi + 1), &err));
      }
      if (s->lo != 0) {
        EXPECT_FALSE(c.set(key, std::to_string(s->lo - 1), &err));
      }
    }
    if (s->kind == K::kSwitch) {
      for (const char* w : {"1", "0", "true", "false", "YES", "no", "On", "off"})
        EXPECT_TRUE(c.set(key, w, &err)) << w << ": " << err;
      EXPECT_FALSE(c.set(key, "maybe", &err));
    }
    if (s->dflt[0] != '(') {
      Config fresh, with_default;
      EXPECT_TRUE(with_default.set(key, s->dflt, &err)) << err;
      EXPECT_TRUE(fresh == with_default)
          << "the table's default '" << s->dflt << "' is not Config's";
    }
  }
  EXPECT_GT(checked, 30);
}

TEST(SettingsReference, TheLibrarysDefaultsAreValuesOfTheirKind) {
  for (const wire::SettingInfo* s = wire::settings_begin(); s != wire::settings_end(); ++s) {
    SCOPED_TRACE(s->name);
    bool b = false;
    long long n = 0;
    if (s->kind == wire::SettingKind::kSwitch) {
      EXPECT_TRUE(wire::parse_switch(s->dflt, &b));
    }
    if (s->kind == wire::SettingKind::kNumber && s->dflt[0] != '(') {
      EXPECT_TRUE(wire::parse_number(s->dflt, s->lo, s->hi, &n));
    }
  }
}

// Every setting of the table is read somewhere: a "CKPTFWD_NAME" string in src/ or
// tools/ckptfwd/, or a key the forwarder's settings match (common/config.cc).
TEST(SettingsReference, EverySettingIsReadByTheCode) {
  std::set<std::string> read;
  const std::regex literal(R"re("CKPTFWD_([A-Z][A-Z0-9_]*)")re");
  const std::regex key(R"re(key == "([A-Z][A-Z0-9_]*)")re");
  for (const char* dir : {"src", "tools/ckptfwd"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(CKPTFWD_SOURCE_DIR) / dir)) {
      const std::string ext = e.path().extension();
      if (ext != ".cc" && ext != ".h") continue;
      const std::string text = read_all(e.path());
      for (const std::regex* re : {&literal, &key})
        for (std::sregex_iterator it(text.begin(), text.end(), *re), end; it != end; ++it)
          read.insert((*it)[1]);
    }
  for (const wire::SettingInfo* s = wire::settings_begin(); s != wire::settings_end(); ++s)
    EXPECT_TRUE(read.count(s->name)) << "CKPTFWD_" << s->name << " is read nowhere";
}

TEST(SettingsFile, LinesCommentsAndProblems) {
  std::string text =
      "# a comment\n"
      "  capture = ckpt/* # the globs\r\n"
      "\n"
      "KEEP=2\n"
      "no equals sign\n"
      "empty =\n"
      "last";
  std::vector<wire::ConfigLine> lines(8);
  int n = wire::split_config_text(text.data(), text.size(), lines.data(), 8);
  ASSERT_EQ(n, 5);
  EXPECT_STREQ(lines[0].key, "capture");
  EXPECT_STREQ(lines[0].value, "ckpt/*");
  EXPECT_EQ(lines[0].line, 2);
  EXPECT_STREQ(lines[1].key, "KEEP");
  EXPECT_STREQ(lines[1].value, "2");
  EXPECT_EQ(lines[1].line, 4);
  EXPECT_EQ(lines[2].key, nullptr);
  EXPECT_EQ(lines[2].line, 5);
  EXPECT_STREQ(lines[3].key, "empty");
  EXPECT_STREQ(lines[3].value, "");
  EXPECT_EQ(lines[4].key, nullptr);
  EXPECT_EQ(lines[4].line, 7);
}

TEST(SettingsFile, TheEnvironmentOverTheFileTheLastLineAndAnyCase) {
  char dir[] = "/tmp/ckf-settings-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string a = std::string(dir) + "/a.conf", b = std::string(dir) + "/b.conf";
  std::ofstream(a) << "keep = 1\nckptfwd_KEEP = 4\nstage_limit = 2G\n";
  std::ofstream(b) << "keep = 7\n";
  const char* saved_keep = getenv("CKPTFWD_KEEP");
  std::string keep_saved = saved_keep ? saved_keep : "";
  unsetenv("CKPTFWD_KEEP");
  setenv("CKPTFWD_CONFIG", a.c_str(), 1);
  wire::SettingOrigin from;
  const char* v = wire::setting_value("CKPTFWD_KEEP", &from);
  ASSERT_NE(v, nullptr);
  EXPECT_STREQ(v, "4");
  EXPECT_EQ(from.kind, wire::SettingOrigin::kFile);
  EXPECT_EQ(from.line, 2);
  EXPECT_STREQ(wire::setting_value("CKPTFWD_STAGE_LIMIT"), "2G");
  EXPECT_EQ(wire::setting_value("CKPTFWD_LEVEL"), nullptr);
  setenv("CKPTFWD_KEEP", "3", 1);
  EXPECT_STREQ(wire::setting_value("CKPTFWD_KEEP", &from), "3");
  EXPECT_EQ(from.kind, wire::SettingOrigin::kEnvironment);
  unsetenv("CKPTFWD_KEEP");
  setenv("CKPTFWD_CONFIG", b.c_str(), 1);  // another file: read anew
  EXPECT_STREQ(wire::setting_value("CKPTFWD_KEEP"), "7");
  EXPECT_EQ(wire::config_file_problem(), nullptr);
  setenv("CKPTFWD_CONFIG", (std::string(dir) + "/none.conf").c_str(), 1);
  EXPECT_EQ(wire::setting_value("CKPTFWD_KEEP"), nullptr);
  ASSERT_NE(wire::config_file_problem(), nullptr);
  EXPECT_NE(std::string(wire::config_file_problem()).find("cannot read"), std::string::npos);
  unsetenv("CKPTFWD_CONFIG");
  if (saved_keep) setenv("CKPTFWD_KEEP", keep_saved.c_str(), 1);
  fs::remove_all(dir);
}

// A FIFO (or a device) named as the settings file is refused at once: read, it would hold
// the application's start (the library reads the file at init) or the forwarder's.
TEST(SettingsFile, AFifoIsRefusedNotWaitedOn) {
  char dir[] = "/tmp/ckf-settings-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/fifo.conf";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  setenv("CKPTFWD_CONFIG", fifo.c_str(), 1);
  EXPECT_EQ(wire::setting_value("CKPTFWD_KEEP"), nullptr);
  ASSERT_NE(wire::config_file_problem(), nullptr);
  EXPECT_NE(std::string(wire::config_file_problem()).find("not a regular file"), std::string::npos);
  Config c;
  std::string err;
  EXPECT_FALSE(Config::load(c, &err));
  EXPECT_NE(err.find("not a regular file"), std::string::npos) << err;
  unsetenv("CKPTFWD_CONFIG");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ckptfwd
