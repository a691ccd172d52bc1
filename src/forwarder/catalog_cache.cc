#include "forwarder/catalog_cache.h"

#include <sys/stat.h>

#include "common/owner_check.h"
#include "forwarder/log.h"

namespace ckptfwd::fwd {

Catalog& CatalogCache::get(const std::string& store) {
  Entry& e = stores_[store];
  if (e.frozen && e.loaded) return e.cat;
  e.cat.keep_versions(keep_);  // also for a new entry whose first load fails
  struct stat st;
  off_t size = -1;
  timespec mtime{};
  if (stat((store + "/MANIFEST").c_str(), &st) == 0) {
    size = st.st_size;
    mtime = st.st_mtim;
  }
  if (e.loaded && size == e.size && mtime.tv_sec == e.mtime.tv_sec &&
      mtime.tv_nsec == e.mtime.tv_nsec)
    return e.cat;
  Catalog fresh;
  fresh.keep_versions(keep_);
  std::string err;
  // Never read back what another user could have forged (README, "Other users on the node"): a
  // foreign store reads as empty, and its MANIFEST must not be a symbolic link.
  struct stat lst;
  if (size >= 0 && (!check_store_dir(store, &err) ||
                    (lstat((store + "/MANIFEST").c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)))) {
    if (err.empty()) err = store + "/MANIFEST is a symbolic link; refusing it. Fix: remove it";
    if (!e.refused_logged) LOG_ERROR("%s", err.c_str());
    e.refused_logged = true;
    return e.cat;
  }
  if (size >= 0 && !fresh.load(store, &err)) {
    LOG_WARN("cannot read the manifest of store %s: %s", store.c_str(), err.c_str());
    return e.cat;  // keep the last good view
  }
  for (const std::string& p : fresh.problems()) LOG_WARN("store %s: %s", store.c_str(), p.c_str());
  e.cat = std::move(fresh);
  e.loaded = true;
  e.size = size;
  e.mtime = mtime;
  return e.cat;
}

void CatalogCache::freeze(const std::string& store, bool frozen) {
  if (frozen) get(store);  // loaded before anything is appended
  stores_[store].frozen = frozen;
}

}  // namespace ckptfwd::fwd
