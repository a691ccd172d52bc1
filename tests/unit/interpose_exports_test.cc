// The preload library's export list (exports.map) must name exactly the entry points of
// the wrapper table (real_calls.def): a wrapper missing from the map would silently never
// run, an extra export would pre-empt a libc symbol nobody wraps.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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
