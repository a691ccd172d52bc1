#include "forwarder/store_paths.h"

#include <time.h>
#include <xxhash.h>

#include <atomic>
#include <cstdio>

namespace ckptfwd::fwd {

std::string dirname_of(const std::string& path) {
  size_t s = path.find_last_of('/');
  if (s == std::string::npos) return ".";
  if (s == 0) return "/";
  return path.substr(0, s);
}

std::string basename_of(const std::string& path) {
  size_t s = path.find_last_of('/');
  return s == std::string::npos ? path : path.substr(s + 1);
}

std::string store_for(const Config& cfg, const std::string& path) {
  if (!cfg.store.empty()) return cfg.store;
  std::string d = dirname_of(path);
  return (d == "/" ? "" : d) + "/.ckptfwd";
}

std::string new_container_name(const std::string& node) {
  static std::atomic<uint64_t> seq{0};
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  long long ns = static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
  char buf[400];
  snprintf(buf, sizeof(buf), "c-%s-%lld-%llu.ckc", node.c_str(), ns,
           static_cast<unsigned long long>(seq.fetch_add(1)));
  return buf;
}

std::string staged_data_path(const std::string& dir, uint64_t vid) {
  return dir + "/v" + std::to_string(vid) + ".data";
}

std::string staged_meta_path(const std::string& dir, uint64_t vid) {
  return dir + "/v" + std::to_string(vid) + ".meta";
}

std::string read_view_path(const std::string& dir, const std::string& store,
                           const std::string& container, uint32_t index) {
  std::string key = store + "/" + container + "#" + std::to_string(index);
  char hex[17];
  snprintf(hex, sizeof(hex), "%016llx",
           static_cast<unsigned long long>(XXH64(key.data(), key.size(), 0)));
  return dir + "/r" + hex + ".data";
}

}  // namespace ckptfwd::fwd
