#include "forwarder/restore/restore.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "forwarder/staging/staging.h"
#include "forwarder/util/store_paths.h"
#include "store/manifest/materialize.h"

namespace ckptfwd::fwd {

// A layered entry's view is named after its whole layer list, so a new overlay gives a new
// view instead of reusing a stale one. A plain entry keeps read_view_path's name.
std::string read_view_of(const std::string& dir, const std::string& store, const CatalogEntry& e) {
  if (e.overlays.empty()) return read_view_path(dir, store, e.container, e.file_index);
  std::string key = store + "/" + e.container + "#" + std::to_string(e.file_index);
  for (const Layer& l : e.overlays)
    key += "\n+" + l.container + "#" + std::to_string(l.file_index) + ":" + std::to_string(l.size);
  char hex[17];
  snprintf(hex, sizeof(hex), "%016llx",
           static_cast<unsigned long long>(XXH64(key.data(), key.size(), 0)));
  return dir + "/r" + hex + ".data";
}

namespace {
// The containers restored from last, kept open with their decoded chunks (the reader's
// chunk cache, at most 64 MiB each): the ranks of a node restarting read the files of one
// batch one after another, and in a batch merged by variable those files share chunks, so
// each chunk is decoded about once per node instead of once per rank. Containers are
// immutable once committed and their names unique, so a cached reader never goes stale;
// materialize_entry still checks each one's identity against its MANIFEST record.
class RecentContainers {
 public:
  std::shared_ptr<ContainerReader> get(const std::string& path, std::string* err) {
    std::unique_lock<std::mutex> lk(mu_);
    // Being opened by another thread (the restore threads of a prefetch and the opens of
    // the ranks start together): wait for that reader instead of parsing the index twice.
    cv_.wait(lk, [&] { return !opening_.count(path); });
    for (auto it = open_.begin(); it != open_.end(); ++it)
      if (it->first == path) {
        auto hit = *it;
        open_.erase(it);
        open_.push_back(hit);  // most recent last
        return hit.second;
      }
    opening_.insert(path);
    lk.unlock();
    auto r = std::make_shared<ContainerReader>();
    r->set_decode_threads(decode_threads_.load(std::memory_order_relaxed));
    bool ok = r->open(path, err);
    lk.lock();
    opening_.erase(path);
    cv_.notify_all();
    if (!ok) return nullptr;
    if (open_.size() >= kKept) open_.erase(open_.begin());
    open_.emplace_back(path, r);
    return r;
  }
  void set_decode_threads(unsigned n) { decode_threads_.store(n, std::memory_order_relaxed); }

 private:
  static constexpr size_t kKept = 2;
  std::atomic<unsigned> decode_threads_{1};
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<std::string> opening_;
  std::vector<std::pair<std::string, std::shared_ptr<ContainerReader>>> open_;
};

RecentContainers& recent_containers() {
  static RecentContainers r;
  return r;
}
}  // namespace

std::shared_ptr<ContainerReader> recent_container(const std::string& store, const std::string& name,
                                                  std::string* err) {
  if (!is_plain_container_name(name)) {
    if (err)
      *err = "the MANIFEST names an invalid container '" + name + "' (not a file in the store " +
             store + ")";
    return nullptr;
  }
  return recent_containers().get(store + "/" + name, err);
}

void set_restore_decode_threads(unsigned n) { recent_containers().set_decode_threads(n); }

bool read_view_ready(const std::string& view, uint64_t size) {
  struct stat st;
  return lstat(view.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         static_cast<uint64_t>(st.st_size) == size;
}

bool restore_entry(const std::string& store, const CatalogEntry& e, int fd, std::string* err,
                   bool fresh) {
  std::map<std::string, std::shared_ptr<ContainerReader>> held;  // alive for this restore
  ContainerSource source = [&](const std::string& name, std::string* why) -> ContainerReader* {
    auto r = recent_container(store, name, why);
    if (!r) return nullptr;
    return (held[name] = std::move(r)).get();
  };
  return materialize_entry(e, source, fd, err, fresh);
}

void ensure_read_views(const std::vector<std::string>& views, const std::string& store,
                       const std::vector<const CatalogEntry*>& es, std::vector<std::string>& got,
                       std::vector<bool>& restored, std::vector<std::string>& errs) {
  const size_t n = views.size();
  got.assign(n, "");
  restored.assign(n, false);
  errs.assign(n, "");
  static std::atomic<uint64_t> seq{0};
  static const pid_t pid = getpid();  // the forwarder does not fork once it serves
  std::vector<std::string> tmps;
  std::vector<const CatalogEntry*> todo;
  std::vector<int> fds;
  std::vector<size_t> which;
  for (size_t k = 0; k < n; ++k) {
    if (read_view_ready(views[k], es[k]->size)) {
      got[k] = views[k];
      continue;
    }
    std::string tmp = views[k] + ".tmp" + std::to_string(pid) + "-" + std::to_string(seq++);
    // The file's own permission bits where its owner may read it, so that a read link
    // shows them (wire/read_link.h); the session directory keeps everyone else out.
    const unsigned bits = es[k]->mode & 07777;
    int fd = create_staged(tmp, &errs[k], (bits & S_IRUSR) ? bits : 0600);
    if (fd < 0) continue;
    tmps.push_back(std::move(tmp));
    todo.push_back(es[k]);
    fds.push_back(fd);
    which.push_back(k);
  }
  std::map<std::string, std::shared_ptr<ContainerReader>> held;  // alive for these restores
  ContainerSource source = [&](const std::string& name, std::string* why) -> ContainerReader* {
    auto it = held.find(name);
    if (it != held.end()) return it->second.get();
    auto r = recent_container(store, name, why);
    if (!r) return nullptr;
    return (held[name] = std::move(r)).get();
  };
  std::vector<std::string> why;
  materialize_entries(todo, source, fds, why);
  for (size_t j = 0; j < which.size(); ++j) {
    const size_t k = which[j];
    close(fds[j]);
    bool ok = why[j].empty();
    if (!ok) errs[k] = why[j];
    if (ok && ::rename(tmps[j].c_str(), views[k].c_str()) != 0) {
      errs[k] = "cannot rename " + tmps[j] + " to " + views[k] + ": " + strerror(errno);
      ok = false;
    }
    if (!ok) {
      ::unlink(tmps[j].c_str());
      continue;
    }
    got[k] = views[k];
    restored[k] = true;
  }
}

std::string ensure_read_view(const std::string& view, const std::string& store,
                             const CatalogEntry& e, bool* restored, std::string* err) {
  std::vector<std::string> got, errs;
  std::vector<bool> done;
  ensure_read_views({view}, store, {&e}, got, done, errs);
  *restored = done[0];
  if (err && got[0].empty()) *err = errs[0];
  return got[0];
}

void remove_read_views(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  while (dirent* de = readdir(d)) {
    const char* n = de->d_name;
    size_t len = strlen(n);
    bool view =
        n[0] == 'r' && (strstr(n, ".data.tmp") || (len > 5 && !strcmp(n + len - 5, ".data")));
    if (view) unlinkat(dirfd(d), n, 0);
  }
  closedir(d);
}

}  // namespace ckptfwd::fwd
