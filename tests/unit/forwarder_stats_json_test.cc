// The forwarder's stats record (Stats::format_json, written by hand because the crash
// handler formats it from a signal handler) is a JSON object a strict reader accepts, with
// exactly the keys docs/json.md lists for `ckptfwd stats --json`, of the listed types.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "common/json_text.h"
#include "forwarder/state/stats.h"

namespace ckptfwd::fwd::test {
namespace {

// key -> type of the rows of the docs/json.md section headed ## `heading`.
std::map<std::string, std::string> documented(const std::string& heading) {
  std::ifstream in(std::string(CKPTFWD_SOURCE_DIR) + "/docs/json.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  std::map<std::string, std::string> rows;
  size_t at = doc.find("## `" + heading + "`\n");
  if (at == std::string::npos) return rows;
  size_t end = doc.find("\n## ", at + 1);
  std::string body = doc.substr(at, end == std::string::npos ? std::string::npos : end - at);
  std::regex row(R"(\n\| `([^`]+)` \| ([^|]+) \|)");
  for (std::sregex_iterator it(body.begin(), body.end(), row), e; it != e; ++it)
    rows[(*it)[1]] = (*it)[2];
  return rows;
}

TEST(ForwarderStatsJson, KeysAndTypesAsDocumented) {
  auto rows = documented("ckptfwd stats --json");
  ASSERT_GT(rows.size(), 30u) << "docs/json.md has no table for `ckptfwd stats --json`";
  Stats s;
  s.set_node("n1");  // the forwarder sets them at start
  s.set_job("j1");
  s.bytes_committed = 3000;
  s.bytes_stored = 1000;
  Json j = json_parse(s.to_json());
  ASSERT_TRUE(j.is_object()) << s.to_json();
  for (const auto& [key, value] : j.items()) {
    auto it = rows.find(key);
    if (it == rows.end()) {
      ADD_FAILURE() << "key " << key << " is not in docs/json.md (`ckptfwd stats --json`)";
      continue;
    }
    const std::string& type = it->second;
    bool ok = type.rfind("integer", 0) == 0  ? value.is_number_integer()
              : type.rfind("number", 0) == 0 ? value.is_number()
              : type.rfind("string", 0) == 0 ? value.is_string()
                                             : false;
    EXPECT_TRUE(ok) << key << " = " << value << " is not " << type;
  }
  for (const auto& [key, type] : rows) {
    // The record is flat: keys inside objects (the CLI's "advice") are not its own.
    if (type.find("absent unless") != std::string::npos || key.find('.') != std::string::npos)
      continue;
    EXPECT_TRUE(j.contains(key)) << "documented key " << key << " missing from " << s.to_json();
  }
  EXPECT_EQ(j["ratio"], 3.0);
}

}  // namespace
}  // namespace ckptfwd::fwd::test
