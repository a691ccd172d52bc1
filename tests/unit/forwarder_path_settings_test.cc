// Path settings checked at the forwarder's start (forwarder/daemon/path_settings.h): an unusable
// one is named with its key, the value and the fix; a usable one passes and is untouched.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "forwarder/daemon/path_settings.h"

namespace ckptfwd::fwd {
namespace {

struct Dir {
  std::string path;
  Dir() {
    std::string t = (std::filesystem::temp_directory_path() / "ckptfwd-paths-XXXXXX").string();
    path = mkdtemp(t.data()) ? t : "";
  }
  ~Dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

TEST(PathSettings, AFileInAMissingDirectoryIsNamedWithItsKey) {
  Dir d;
  std::string err;
  EXPECT_FALSE(usable_output_file("CKPTFWD_LOG", d.path + "/missing/f.log", &err));
  EXPECT_NE(err.find("CKPTFWD_LOG=" + d.path + "/missing/f.log"), std::string::npos) << err;
  EXPECT_NE(err.find("Fix:"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(d.path + "/missing")) << "a check, not a mkdir";
}

TEST(PathSettings, ADirectoryIsNotAFile) {
  Dir d;
  std::string err;
  EXPECT_FALSE(usable_output_file("CKPTFWD_STATS_FILE", d.path, &err));
  EXPECT_NE(err.find("CKPTFWD_STATS_FILE="), std::string::npos) << err;
}

TEST(PathSettings, UsableFilesAndSpecialValuesPass) {
  Dir d;
  std::string err;
  EXPECT_TRUE(usable_output_file("CKPTFWD_LOG", d.path + "/new.log", &err)) << err;
  EXPECT_FALSE(std::filesystem::exists(d.path + "/new.log")) << "nothing created";
  for (const char* v : {"", "stderr", "syslog"})
    EXPECT_TRUE(usable_output_file("CKPTFWD_LOG", v, &err)) << v;
}

TEST(PathSettings, AStoreIsCreatedOrNamedWithItsKey) {
  Dir d;
  std::string err;
  EXPECT_TRUE(usable_store("", &err)) << "the per-glob default is made at the first commit";
  EXPECT_TRUE(usable_store(d.path + "/a/store", &err)) << err;
  EXPECT_TRUE(std::filesystem::is_directory(d.path + "/a/store"));
  std::ofstream(d.path + "/file") << "x";
  EXPECT_FALSE(usable_store(d.path + "/file/store", &err));
  EXPECT_NE(err.find("CKPTFWD_STORE=" + d.path + "/file/store"), std::string::npos) << err;
}

}  // namespace
}  // namespace ckptfwd::fwd
