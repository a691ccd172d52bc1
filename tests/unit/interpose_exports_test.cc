// The preload library's export list (exports.map) must name exactly the entry points of
// the wrapper table (real_calls.def): a wrapper missing from the map would silently never
// run, an extra export would pre-empt a libc symbol nobody wraps.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_env.h"

namespace {

using ckptfwd::test::file_text;
const auto& slurp = file_text;

TEST(InterposeExports, MapMatchesWrapperTable) {
  std::string dir = CKPTFWD_INTERPOSE_SOURCE_DIR;
  std::string def = slurp(dir + "/real_calls.def");
  std::string map = slurp(dir + "/exports.map");
  ASSERT_FALSE(def.empty()) << "cannot read " << dir << "/real_calls.def";
  ASSERT_FALSE(map.empty()) << "cannot read " << dir << "/exports.map";
  std::set<std::string> wrapped, exported;
  std::regex real_line(R"(^REAL\([^,]+,\s*([A-Za-z0-9_]+),)", std::regex::multiline);
  for (std::sregex_iterator it(def.begin(), def.end(), real_line), end; it != end; ++it)
    wrapped.insert((*it)[1]);
  auto g = map.find("global:");
  auto l = map.find("local:");
  ASSERT_NE(g, std::string::npos);
  ASSERT_NE(l, std::string::npos);
  std::string globals = map.substr(g + 7, l - g - 7);
  std::regex sym(R"(([A-Za-z0-9_]+)\s*;)");
  for (std::sregex_iterator it(globals.begin(), globals.end(), sym), end; it != end; ++it)
    exported.insert((*it)[1]);
  EXPECT_GT(wrapped.size(), 60u);
  EXPECT_EQ(wrapped, exported);
  EXPECT_NE(map.find("*;", l), std::string::npos) << "everything else must stay local";
}

}  // namespace

namespace {

// Every file the preload library compiles from includes, transitively, resolved against
// src/ (its own directory and common/).
void collect_includes(const std::string& src, const std::string& rel, std::set<std::string>& seen,
                      std::vector<std::string>& offenders) {
  if (!seen.insert(rel).second) return;
  std::string text = slurp(src + "/" + rel);
  std::regex inc(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])", std::regex::multiline);
  for (std::sregex_iterator it(text.begin(), text.end(), inc), end; it != end; ++it) {
    std::string name = (*it)[1];
    if (name.find("nlohmann") != std::string::npos || name == "common/json_text.h")
      offenders.push_back(rel + " includes " + name);
    if (std::ifstream(src + "/" + name).good()) collect_includes(src, name, seen, offenders);
  }
}

}  // namespace

// The library runs inside other people's programs: nlohmann-json (the CLI's and the
// forwarder's JSON, common/json_text.h) must not reach it, not even through a header.
TEST(InterposeSources, IncludeNoJsonLibrary) {
  std::string dir = CKPTFWD_INTERPOSE_SOURCE_DIR;
  std::string src = dir + "/..";
  std::set<std::string> seen;
  std::vector<std::string> offenders;
  std::string cmake = slurp(dir + "/CMakeLists.txt");
  ASSERT_FALSE(cmake.empty());
  // The sources its CMakeLists.txt lists (mpi/ ones included), and the wire objects.
  std::regex listed(R"(([A-Za-z0-9_/]+\.cc))");
  size_t files = 0;
  for (std::sregex_iterator it(cmake.begin(), cmake.end(), listed), end; it != end; ++it) {
    std::string rel = "interpose/" + std::string((*it)[1]);
    if (!std::ifstream(src + "/" + rel).good()) continue;
    collect_includes(src, rel, seen, offenders);
    ++files;
  }
  for (const char* wire : {"wire/protocol.cc", "wire/session.cc"})
    collect_includes(src, wire, seen, offenders);
  EXPECT_GT(files, 20u) << "the library's sources were not found in " << dir << "/CMakeLists.txt";
  std::string all;
  for (const std::string& o : offenders) all += o + "\n";
  EXPECT_TRUE(offenders.empty()) << all;
}
