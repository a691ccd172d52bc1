#include "forwarder/commit/gc.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "forwarder/util/log.h"
#include "store/manifest/manifest.h"
#include "store/manifest/materialize.h"

namespace ckptfwd::fwd {

void gc_due(const CommitContext& c, const std::string& store) {
  if (c.cfg.keep <= 0) return;
  c.state.gc_due.insert(store);
  c.state.work_cv.notify_all();
}

namespace {
// The manifest records first, then the files: see manifest::append_drops.
void drop_containers(const CommitContext& c, const std::string& store,
                     const std::vector<std::string>& names) {
  std::string err;
  if (!manifest::append_drops(store, names, &err)) {
    LOG_WARN(
        "cannot record the removal of %zu old containers of %s (CKPTFWD_KEEP=%d): %s; "
        "they stay",
        names.size(), store.c_str(), c.cfg.keep, err.c_str());
    return;
  }
  for (const std::string& name : names) {
    std::string path = store + "/" + name;
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      LOG_WARN("cannot delete old container %s (CKPTFWD_KEEP=%d): %s", path.c_str(), c.cfg.keep,
               strerror(errno));
      continue;
    }
    c.stats.containers_removed++;
    c.chunk_indexes.forget(store, name);
    c.ref_keep.forget(store, name);
    LOG_INFO(
        "deleted %s: it holds no live file nor one of the %d newest versions of any "
        "path (CKPTFWD_KEEP)",
        path.c_str(), c.cfg.keep);
  }
}
}  // namespace

bool collect_due_garbage(const CommitContext& c, std::unique_lock<std::mutex>& lk) {
  State& s = c.state;
  if (s.gc_due.empty()) return false;
  bool unlocked = false;
  s.gc_running = true;
  while (!s.gc_due.empty()) {
    std::string store = *s.gc_due.begin();
    s.gc_due.erase(s.gc_due.begin());
    // Reloaded if another node's forwarder or the CLI appended meanwhile. No record of
    // theirs makes an older container needed again: commits and overlays name new ones.
    const Catalog& cat = s.catalogs.get(store);
    std::vector<std::string> names;
    for (const std::string& n : cat.garbage())
      if (is_plain_container_name(n)) names.push_back(n);  // never a path outside the store
    if (names.empty()) continue;
    std::vector<std::string> all = cat.containers();
    lk.unlock();  // reads, an fdatasync and unlinks: not under the lock the verbs need
    // Reference chunks (store/container/chunk_ref.h): what a kept container refers to stays.
    std::string err;
    size_t before = names.size();
    if (!c.ref_keep.spare_referenced(store, all, names, &err))
      LOG_WARN("%s: nothing deleted (CKPTFWD_KEEP=%d): %s", store.c_str(), c.cfg.keep, err.c_str());
    else {
      if (names.size() < before)
        LOG_INFO("%s: %zu old containers stay: kept containers refer to their chunks",
                 store.c_str(), before - names.size());
      if (!names.empty()) drop_containers(c, store, names);
    }
    lk.lock();
    unlocked = true;
  }
  s.gc_running = false;
  s.done_cv.notify_all();
  return unlocked;
}

}  // namespace ckptfwd::fwd
