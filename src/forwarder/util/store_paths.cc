#include "forwarder/util/store_paths.h"

#include <sys/stat.h>
#include <time.h>
#include <xxhash.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <unordered_map>

#include "wire/session.h"

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

namespace {
std::string store_in(const std::string& dir) { return (dir == "/" ? "" : dir) + "/.ckptfwd"; }

bool holds(const std::string& dir, const std::string& path) {
  if (dir == "/") return path.size() > 1 && path[0] == '/';
  return path.size() > dir.size() + 1 && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

// Whether dir holds a store of the former default (a .ckptfwd beside the captured files).
// Asked once per directory and thread: stores are not made there any more, so the answer
// stays.
bool has_old_store(const std::string& store) {
  thread_local std::unordered_map<std::string, bool> known;
  auto it = known.find(store);
  if (it != known.end()) return it->second;
  struct stat st;
  bool yes = ::lstat(store.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  if (known.size() > 4096) known.clear();  // bounded: many directories, asked again
  known.emplace(store, yes);
  return yes;
}
}  // namespace

std::string store_for(const Config& cfg, const std::string& path) {
  if (!cfg.store.empty()) return cfg.store;
  const std::string* top = nullptr;
  for (const std::string& dir : cfg.capture_dirs)
    if (holds(dir, path) && (!top || dir.size() > top->size())) top = &dir;
  std::string d = dirname_of(path);
  if (!top || *top == d) return store_in(d);
  // A directory that already has a store of the former default keeps it (its files were
  // committed there; reads, rewrites and listings find them where they are).
  std::string beside = store_in(d);
  if (has_old_store(beside)) return beside;
  return store_in(*top);
}

std::vector<std::string> known_stores(const Config& cfg) {
  if (!cfg.store.empty()) return {cfg.store};
  std::vector<std::string> out;
  for (const std::string& dir : cfg.capture_dirs) out.push_back(store_in(dir));
  return out;
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

namespace {
std::string staged_path(const std::string& dir, uint64_t vid, const char* ext) {
  char buf[PATH_MAX + 32];
  return staged_file(dir.c_str(), vid, ext, buf, sizeof(buf)) ? buf : std::string();
}
}  // namespace

std::string staged_data_path(const std::string& dir, uint64_t vid) {
  return staged_path(dir, vid, "data");
}

std::string staged_meta_path(const std::string& dir, uint64_t vid) {
  return staged_path(dir, vid, "meta");
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
