#include "forwarder/state/catalog_cache.h"

#include <sys/stat.h>

#include "forwarder/util/log.h"
#include "forwarder/util/notices.h"
#include "store/manifest/catalog_snapshot.h"
#include "store/manifest/end_mark.h"
#include "store/manifest/owner_check.h"

namespace ckptfwd::fwd {

namespace {
// Which version a live entry is (its base and how many overlays), "" for none.
std::string live_mark(const CatalogEntry* e) {
  if (!e) return "";
  return e->container + "#" + std::to_string(e->file_index) + "+" +
         std::to_string(e->overlays.size());
}

// A store in its default place keeps the capture directories it had in STORE/HOMES
// (store/manifest/store_homes.h): its own now, and the former ones its paths were read
// from, so the records this forwarder appends under the new place and the old ones both
// read as the new after another move. A store whose files all lie elsewhere and no former
// place could be told is said on the application's stderr: its restart would see none.
void note_homes(const std::string& store, const Catalog& cat) {
  const std::string& cap = cat.capture_dir();
  if (cap.empty()) return;
  std::string err;
  if (!store_homes::add_place(store, cat.moves(), &err))
    LOG_WARN("cannot record the capture directory of store %s: %s", store.c_str(), err.c_str());
  if (!cat.moves().empty())
    LOG_INFO("store %s was moved: the files it recorded below %s are read below %s%s",
             store.c_str(), cat.moves().front().from.c_str(), cap.c_str(),
             cat.inferred_former().empty() ? "" : " (former place inferred: no HOMES file)");
  std::vector<std::string> away = cat.outside_capture_dir();
  if (away.empty()) return;
  std::string text = "store " + store + " holds " + std::to_string(away.size()) +
                     " files recorded outside its capture directory " + cap + " (e.g. " +
                     away.front() +
                     "): they are not seen here. If the run directory was moved or "
                     "copied, tell the store where it was: ckptfwd relocate " +
                     store + " OLD_CAPTURE_DIR";
  LOG_ERROR("%s", text.c_str());
  notices().post("away " + store, text + log_pointer());
}
}  // namespace

void CatalogCache::manifest_now(const Entry& e, const std::string& store, off_t* size,
                                timespec* mtime) {
  struct stat st;
  *size = -1;
  *mtime = timespec{};
  if (stat((store + "/MANIFEST").c_str(), &st) == 0) {
    // Marked longer than this client shows it (another node appended; this client's
    // cache lags, store/manifest/end_mark.h): grown. No mtime, so that the next look
    // reads again until the client shows it all.
    *size = st.st_size;
    *mtime = st.st_mtim;
    if (const uint64_t mark = e.may_lag ? manifest::end_mark(store) : 0;
        mark > static_cast<uint64_t>(*size)) {
      *size = static_cast<off_t>(mark);
      *mtime = timespec{};
    }
  }
}

Catalog& CatalogCache::get(const std::string& store) {
  Entry& e = stores_[store];
  if (e.frozen && e.loaded) return e.cat;
  e.cat.keep_versions(keep_);  // also for a new entry whose first load fails
  if (!e.loaded) e.may_lag = manifest::view_may_lag(store);
  off_t size;
  timespec mtime;
  manifest_now(e, store, &size, &mtime);
  if (e.loaded && size == e.size && mtime.tv_sec == e.mtime.tv_sec &&
      mtime.tv_nsec == e.mtime.tv_nsec)
    return e.cat;
  // A view older than records this forwarder appended (on a distributed file system this
  // client sees the leader's appends of them late): the catalog keeps them, applied in
  // memory, until the MANIFEST shows them.
  if (e.loaded && size >= 0 && static_cast<uint64_t>(size) < manifest::appended_end(store))
    return e.cat;
  // Grown (records appended by a commit here, on another node or by the CLI): replay the
  // new records only. The replay refuses what does not continue the records it has
  // (another file, a shorter one, a first new record that does not chain): then the
  // whole MANIFEST is read again below, with the checks of a first load.
  struct stat lst;
  if (e.loaded && size > e.size && e.size >= 0 &&
      !(lstat((store + "/MANIFEST").c_str(), &lst) == 0 && S_ISLNK(lst.st_mode))) {
    if (replay_onto(e, store, size, mtime)) return e.cat;
  }
  if (load_whole(e, store, size, mtime, keep_, default_places_)) snapshot_if_due(e, store);
  return e.cat;
}

bool CatalogCache::load_whole(Entry& e, const std::string& store, off_t size, timespec mtime,
                              int keep, bool default_places) {
  Catalog fresh;
  fresh.keep_versions(keep);
  fresh.infer_moves(default_places);
  std::string err;
  struct stat lst;
  // Never read back what another user could have forged (docs/semantics.md, "Other users on the
  // node"): a foreign store reads as empty, and its MANIFEST must not be a symbolic link.
  if (size >= 0 && (!check_store_dir(store, &err) ||
                    (lstat((store + "/MANIFEST").c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)))) {
    if (err.empty()) err = store + "/MANIFEST is a symbolic link; refusing it. Fix: remove it";
    if (!e.refused_logged) LOG_ERROR("%s", err.c_str());
    e.refused_logged = true;
    return false;
  }
  // From the store's catalog snapshot when it fits: the live files and the newer records,
  // not the whole history (store/manifest/catalog_snapshot.h).
  if (size >= 0 && !fresh.load_from_snapshot(store, &err)) {
    LOG_WARN("cannot read the manifest of store %s: %s", store.c_str(), err.c_str());
    return false;  // keep the last good view
  }
  for (const std::string& p : fresh.problems()) LOG_WARN("store %s: %s", store.c_str(), p.c_str());
  e.lost = find_lost_records(store, fresh);
  e.lost_live.clear();
  for (const auto& [p, where] : e.lost.paths) e.lost_live[p] = live_mark(fresh.find(p));
  for (const std::string& p : e.lost.problems) LOG_ERROR("%s", p.c_str());
  if (!e.loaded && size >= 0 && default_places) note_homes(store, fresh);
  e.base = fresh;
  e.cat = std::move(fresh);
  e.loaded = true;
  e.size = size;
  e.mtime = mtime;
  return true;
}

CatalogCache::Preloaded CatalogCache::preload(const std::string& store, int keep,
                                              bool default_places) {
  Preloaded p;
  p.entry = std::make_shared<Entry>();
  Entry& e = *p.entry;
  e.cat.keep_versions(keep);
  e.may_lag = manifest::view_may_lag(store);
  off_t size;
  timespec mtime;
  manifest_now(e, store, &size, &mtime);
  // No store yet (nothing to find), or one that cannot be read: get() decides then.
  if (size < 0 || !load_whole(e, store, size, mtime, keep, default_places))
    p.entry.reset();
  else
    snapshot_if_due(e, store);  // as get()'s first load
  return p;
}

bool CatalogCache::install(const std::string& store, Preloaded&& p) {
  // A store get() or freeze() looked at meanwhile keeps its entry, loaded or not (a
  // frozen one must stay frozen, a refused one logged once).
  if (!p.entry || known(store)) return false;
  p.entry->cat.keep_versions(keep_);
  p.entry->base.keep_versions(keep_);
  stores_[store] = std::move(*p.entry);
  p.entry.reset();
  return true;
}

const std::string* CatalogCache::lost_version(const std::string& store,
                                              const std::string& path) const {
  auto it = stores_.find(store);
  if (it == stores_.end()) return nullptr;
  const Entry& e = it->second;
  auto p = e.lost.paths.find(path);
  if (p == e.lost.paths.end()) return nullptr;
  auto was = e.lost_live.find(path);
  if (was != e.lost_live.end() && was->second != live_mark(e.cat.find(path))) return nullptr;
  return &p->second;
}

bool CatalogCache::replay_appended(const std::string& store) {
  auto it = stores_.find(store);
  if (it == stores_.end() || !it->second.loaded) return false;
  Entry& e = it->second;
  const std::string manifest = store + "/MANIFEST";
  struct stat st;
  if (e.cat.local_changes() != 0 || lstat(manifest.c_str(), &st) != 0 || S_ISLNK(st.st_mode) ||
      st.st_size <= e.size || e.size < 0 ||
      static_cast<uint64_t>(st.st_size) < manifest::appended_end(store))
    return false;
  return replay_onto(e, store, st.st_size, st.st_mtim) &&
         e.base.replayed_bytes() >= manifest::appended_end(store);
}

bool CatalogCache::replay_onto(Entry& e, const std::string& store, off_t size, timespec mtime) {
  size_t known = e.base.problems().size();
  std::string err;
  if (!e.base.load_appended(store, &err)) return false;
  for (size_t i = known; i < e.base.problems().size(); ++i)
    LOG_WARN("store %s: %s", store.c_str(), e.base.problems()[i].c_str());
  snapshot_if_due(e, store);
  // The file's end read short of this forwarder's records (a client whose reads lag its
  // attributes): cat keeps them in memory; looked at again at the next get().
  if (e.base.replayed_bytes() < manifest::appended_end(store)) return true;
  // Unchanged in memory: continue its replay too (no copy of a large catalog).
  if (e.cat.local_changes() != 0 || !e.cat.load_appended(store, &err)) {
    e.cat = e.base;
    ++copies_;
  }
  e.size = size;
  e.mtime = mtime;
  return true;
}

void CatalogCache::snapshot_if_due(Entry& e, const std::string& store) {
  std::string err;
  if (!catalog_snapshot::write_if_due(store, e.base, &err))
    LOG_WARN(
        "cannot write the catalog snapshot of store %s (%s): the next forwarder replays "
        "its whole MANIFEST instead",
        store.c_str(), err.c_str());
}

void CatalogCache::freeze(const std::string& store, bool frozen) {
  if (frozen) get(store);  // loaded before anything is appended
  stores_[store].frozen = frozen;
}

}  // namespace ckptfwd::fwd
