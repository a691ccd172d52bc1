#include "forwarder/daemon/path_settings.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "store/manifest/manifest.h"

namespace ckptfwd::fwd {

namespace {
std::string parent_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
}  // namespace

bool usable_output_file(const char* key, const std::string& path, std::string* err) {
  if (path.empty() || path == "stderr" || path == "syslog") return true;
  const std::string setting = std::string(key) + "=" + path;
  const std::string dir = parent_of(path);
  struct stat st {};
  std::string why;
  if (::stat(dir.c_str(), &st) != 0)
    why = strerror(errno);
  else if (!S_ISDIR(st.st_mode))
    why = "not a directory";
  if (!why.empty()) {
    if (err)
      *err = setting + ": its directory " + dir + " cannot be used (" + why + "). Fix: create " +
             dir + ", or set " + key + " to a file in a directory that exists";
    return false;
  }
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    if (err) *err = setting + ": is a directory. Fix: set " + key + " to a file";
    return false;
  }
  return true;
}

bool usable_store(const std::string& store, std::string* err) {
  if (store.empty()) return true;
  std::string why;
  if (manifest::ensure_store(store, &why)) return true;
  if (err) *err = "CKPTFWD_STORE=" + store + ": " + why;  // why names the fix
  return false;
}

bool check_path_settings(const Config& cfg, std::string* err) {
  return usable_output_file("CKPTFWD_LOG", cfg.log, err) &&
         usable_output_file("CKPTFWD_STATS_FILE", cfg.stats_file, err) &&
         usable_store(cfg.store, err);
}

}  // namespace ckptfwd::fwd
