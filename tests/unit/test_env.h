// Small helpers the unit tests of several areas share (header only: each test binary
// includes it from here).
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ckptfwd::test {

// The whole text of a file ("" when it cannot be read).
inline std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Environment variables set aside while a test runs: the names given, or every variable
// that starts with a prefix, are unset now and put back as they were when it goes.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::vector<std::string>& names) {
    for (const std::string& n : names) keep(n);
  }
  static ScopedEnv with_prefix(const char* prefix) {
    std::vector<std::string> names;
    for (char** e = environ; *e; ++e)
      if (!strncmp(*e, prefix, strlen(prefix))) names.emplace_back(*e, strcspn(*e, "="));
    return ScopedEnv(names);
  }
  ScopedEnv(ScopedEnv&& o) noexcept : saved_(std::move(o.saved_)) { o.saved_.clear(); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    for (const Saved& s : saved_) {
      if (s.set)
        setenv(s.name.c_str(), s.value.c_str(), 1);
      else
        unsetenv(s.name.c_str());
    }
  }

 private:
  struct Saved {
    std::string name, value;
    bool set;
  };
  void keep(const std::string& name) {
    const char* old = getenv(name.c_str());
    saved_.push_back({name, old ? old : "", old != nullptr});
    unsetenv(name.c_str());
  }
  std::vector<Saved> saved_;
};

}  // namespace ckptfwd::test
