// Per-store Catalog cache: loaded lazily (from the store's catalog snapshot when it fits,
// which it renews as the MANIFEST grows); when STORE/MANIFEST changed (size or mtime, or an
// end mark beyond the size this client shows: store/manifest/end_mark.h), so
// that commits by other forwarders or the CLI show up, only the records appended since
// the last read are replayed (a rewritten MANIFEST is read whole again). Not thread-safe:
// used under the state lock.
#pragma once
#include <sys/types.h>

#include <ctime>
#include <map>
#include <memory>
#include <string>

#include "store/manifest/manifest.h"
#include "store/manifest/manifest_end.h"

namespace ckptfwd::fwd {

class CatalogCache {
  struct Entry;

 public:
  // The current catalog of store (never null; an unreadable manifest logs and yields the
  // last good or an empty catalog).
  Catalog& get(const std::string& store);
  const CatalogEntry* find(const std::string& store, const std::string& path) {
    return get(store).find(path);
  }
  void clear() { stores_.clear(); }
  // When records were cut off the end of store's MANIFEST (store/manifest/manifest_end.h) and one
  // of them may have held a newer version of path than the catalog: "STORE/<container>"
  // holding it; else nullptr. Found at the last whole load of store's MANIFEST (get()
  // reads it whole the first time and when it was rewritten, and logs what was lost then);
  // a record of path appended since (a new version, an unlink) settles it.
  const std::string* lost_version(const std::string& store, const std::string& path) const;
  // While frozen, get(store) returns the catalog as it is without looking at the MANIFEST
  // (loading it first if it never was): records being appended are not read back before
  // they are durable (manifest_turn.h). Thawing makes the next get() look again.
  void freeze(const std::string& store, bool frozen);
  // After this forwarder appended records to store's MANIFEST (durable, its turn held):
  // the catalog takes them by replaying the MANIFEST's new records (other nodes' before
  // them too), as a restart would, even while frozen. Nothing is changed in memory, so a
  // later refresh has nothing to undo (no copy of the whole catalog per commit). False
  // when the replay cannot continue from what the cache holds: the caller then applies
  // its change in memory (and the next refresh reloads).
  bool replay_appended(const std::string& store);
  // A store's catalog loaded, as get() does the first time, by a thread that does not hold
  // the state lock: a store with a long history takes a while (about 120 ms for 30,000
  // files on the test machine), which the first OPEN would otherwise wait for. install()
  // it under the lock; a store get() looked at meanwhile keeps its own. Empty when there
  // is no MANIFEST yet or it cannot be read (logged; get() then decides again).
  class Preloaded {
    friend class CatalogCache;
    std::shared_ptr<Entry> entry;
  };
  static Preloaded preload(const std::string& store, int keep, bool default_places = true);
  // True when p became store's catalog; later get()s replay what was appended since.
  bool install(const std::string& store, Preloaded&& p);
  // True once get(), freeze() or install() looked at store (loaded or not): install()
  // takes no such store.
  bool known(const std::string& store) const { return stores_.count(store) != 0; }
  // How often a catalog was replaced by a copy of its plain replay (tests).
  uint64_t copies() const { return copies_; }
  // CKPTFWD_KEEP for every catalog loaded from now on (Catalog::keep_versions).
  void keep_versions(int keep) { keep_ = keep; }
  // Whether stores are in their default place (no CKPTFWD_STORE): only those keep their
  // capture directories in STORE/HOMES and are read below where they are now when moved
  // (store/manifest/store_homes.h).
  void default_places(bool on) { default_places_ = on; }

 private:
  struct Entry {
    Catalog cat;
    // The plain replay of the MANIFEST (no in-memory changes): what a grown MANIFEST's
    // new records are replayed onto when cat was changed in memory (the forwarder applies
    // its own records at once); cat then becomes a copy of it, as a whole reload would.
    Catalog base;
    bool loaded = false;
    // On a file system whose clients may lag (manifest::view_may_lag): the end mark is
    // looked at too. Found at the first load.
    bool may_lag = false;
    off_t size = -1;
    timespec mtime{};
    bool refused_logged = false;  // a foreign store is reported once, not per lookup
    LostRecords lost;             // found at the last whole load
    // Per path of lost.paths, its live entry then (live_mark): another one now means a
    // record of path came after the cut.
    std::map<std::string, std::string> lost_live;
    bool frozen = false;
  };
  // store's MANIFEST size and mtime as get() compares them (grown to the end mark where
  // this client may lag); -1 when there is none.
  static void manifest_now(const Entry& e, const std::string& store, off_t* size, timespec* mtime);
  // The first load (or a reload) of store's whole MANIFEST into e, standing for size and
  // mtime; false (logged, e.cat kept) when the store is refused or cannot be read.
  static bool load_whole(Entry& e, const std::string& store, off_t size, timespec mtime, int keep,
                         bool default_places);
  // The records appended to store's MANIFEST since e's last read, replayed onto e.base and
  // e.cat (a copy of base when cat was changed in memory or cannot continue); e then
  // stands for a MANIFEST of size and mtime. False, e.cat untouched, when base cannot
  // continue (a replaced or shortened MANIFEST, a chain that does not link).
  bool replay_onto(Entry& e, const std::string& store, off_t size, timespec mtime);
  // A new catalog snapshot of e.base when the MANIFEST grew enough since the last one
  // (store/manifest/catalog_snapshot.h); a failure is logged.
  static void snapshot_if_due(Entry& e, const std::string& store);
  std::map<std::string, Entry> stores_;
  int keep_ = 0;
  bool default_places_ = true;
  uint64_t copies_ = 0;
};

}  // namespace ckptfwd::fwd
