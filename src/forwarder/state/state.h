// The forwarder's shared state: every file version it holds, the per-store catalogs, and
// the lock + condition variables everyone synchronises on. One mutex keeps the semantics
// simple (rename/unlink/commit see one consistent picture); nothing slow runs under it
// except small file-system calls on tmpfs and manifest appends.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/config.h"
#include "forwarder/staging/lease_journal_writer.h"
#include "forwarder/staging/staging.h"
#include "forwarder/state/catalog_cache.h"
#include "forwarder/state/ckpt_cost.h"
#include "forwarder/state/pending_journal.h"
#include "forwarder/state/stats.h"
#include "forwarder/state/version.h"

namespace ckptfwd::fwd {

// The parts of the state below are plain data, each under State::mu like everything in
// State; they are split by concern so that each says who uses it.

// Per store: what the verbs, the committer and the collector share about each store.
struct StoreBook {
  CatalogCache catalogs;
  // Stores whose MANIFEST a thread is appending to without the lock (manifest_turn.h).
  std::set<std::string> manifest_busy;
  PendingJournal pending;  // close-to-open across nodes (pending_journal.h)
  // Where leased versions are described (Version::journaled; lease_journal_writer.h).
  LeaseJournalWriter journal;
  // Stores with containers that may have become garbage (CKPTFWD_KEEP, forwarder/commit/gc.h).
  std::set<std::string> gc_due;
  bool gc_running = false;  // collect_due_garbage is at work (DRAIN waits for it)
};

// Who waits and for what: set by the verbs (SYNC, WAITALL, DRAIN, connections) and the
// daemon (shutdown), read by the batcher to seal sooner.
// waiters, draining and shutdown are atomics besides: the yield gate reads them without
// the lock (forwarder/util/yield_gate.h: nothing is held back while something waits).
struct WaitBook {
  std::atomic<int> waiters = 0;  // threads blocked until commits (the batcher then seals fast)
  int sync_waiting = 0;          // of them SYNCs (Version::sync_waiters summed over versions)
  int unchanged_checks = 0;      // versions with Version::check_unchanged set
  int clients = 0;               // connected clients
  std::atomic<bool> draining = false;  // exit drain: seal everything now
  std::atomic<bool> shutdown = false;  // waiters give up (EIO)
};

// When to wake the batcher thread: mark_closed reads it, the batcher sets it.
struct BatcherWake {
  Clock::time_point last_close{};
  // When the batcher thread wakes next by itself, while it sleeps (max: not sleeping, it
  // looks again anyway), and the bytes closed since its last pick: mark_closed wakes it
  // only when a close could make a batch due sooner than that (most closes of a process
  // writing many small files cannot: each wake-up cost ~15% of such a run).
  Clock::time_point batcher_sleeps_until = Clock::time_point::min();
  uint64_t closed_bytes_unpicked = 0;
};

class State : public StoreBook, public WaitBook, public BatcherWake {
 public:
  State(const Config& cfg, Stats& stats, std::string session_dir);

  std::mutex mu;
  std::condition_variable work_cv;      // the batcher: a close, a waiter, a stop
  std::condition_variable done_cv;      // waiters: a version committed, failed or dropped
  std::condition_variable manifest_cv;  // a store's manifest turn was given back (manifest_turn.h)

  // ---- everything below, and the parts above: mu held ----
  std::map<uint64_t, Version> versions;
  // Versions closed by a process on a connection that is gone (or by a previous forwarder
  // of the session, from their .meta): that process's WAITALL on its next connection
  // waits for them too, so the exit wait survives a reconnect. Pruned by forget().
  std::map<long, std::set<uint64_t>> closed_by_pid;
  CheckpointCosts costs;  // what each checkpoint cost the application (ckpt_cost.h)
  uint64_t next_vid = 1;
  uint64_t next_order = 1;
  uint64_t next_close_seq = 1;
  uint64_t next_ext_seq = 1;  // extents files the forwarder writes itself (pid field 0)
  // Whether v, just closed, needs the batcher thread woken (mark_closed).
  bool close_wakes_batcher(const Version& v) const;
  // A reader may have been handed a staged path just before its version committed: the
  // data file outlives the version by this grace so its open() still finds it. The
  // .meta goes at once, so a recovery never commits it twice.
  std::chrono::milliseconds retire_grace{2000};
  // A read view (restore.h) is deleted this long after it was last served, so a restart
  // does not keep a copy of its checkpoint in node memory for the rest of the job. A
  // reader that opened it keeps its bytes (an unlinked file lives until its last close);
  // a later OPEN restores it again. The library retries an OPEN whose view vanished
  // before it could open it.
  std::chrono::milliseconds view_grace{10000};

  // A version put into `versions` by hand, with its path (recovery).
  Version& insert_recovered(uint64_t vid, const std::string& path);

  Version* find(uint64_t vid);
  // Newest visible (ready, not dropped) version of path, or null.
  Version* newest(const std::string& path);
  // Whether path has any version not dropped, ready or still being made.
  bool has_version(const std::string& path);
  // The version of path open for writing (not dropped), or null; *preparing is set if
  // one exists that is still being prepared (its starting bytes copied in).
  Version* open_for_write(const std::string& path, bool* preparing);
  // Every not-dropped version of path (including ones still being prepared).
  std::vector<Version*> pending_of(const std::string& path);
  // Renames v (RENAME of its path): keeps the by-path index in step. Never assign
  // Version::path of a version in `versions` directly.
  void set_path(Version& v, const std::string& to);
  // A new version (state kOpen, ready) with vid, order and staged file names assigned.
  // vid: one reserved from next_vid before (a lease, wire/lease.h); 0: the next one.
  Version& add(const std::string& path, int rank, long pid, uint64_t client, uint32_t mode,
               uint64_t vid = 0);
  // Marks v closed with the size and mtime of its staged file; wakes the batcher.
  // Takes the mode from the staged file if the application changed it there (unless
  // mode_from_file is false: a recovered file's .meta is the authority).
  void mark_closed(Version& v, bool mode_from_file = true);
  // Takes v, closed and not picked into a batch, back to open (Service::reopen_in_place):
  // out of the bytes closed and unpicked, out of its checkpoint wave and its cost (it
  // joins one again at its next close). The caller adds the holder and rewrites the .meta.
  void reopen(Version& v);
  // Drops v: never committed. Deletes its staged files and forgets it unless a client or
  // the pipeline still holds it. v may be dangling afterwards.
  void drop(Version& v);
  // Drops every not-dropped version of path (those `which` accepts, when given); returns
  // how many.
  size_t drop_all(const std::string& path, const std::function<bool(const Version&)>& which = {});
  // Forgets v and deletes its staged files (after commit, or a dropped version released);
  // the data file after retire_grace.
  void forget(uint64_t vid);
  // view is being served: kept until view_grace after now, or for as long as it is being
  // restored (restoring: its deadline is set again when the restore is done).
  void serve_view(const std::string& view, bool restoring);
  // Called (lock held) after a read view's file was deleted at the end of its grace.
  void set_view_released(std::function<void(const std::string&)> f) {
    view_released_ = std::move(f);
  }
  // Deletes retired data files and read views whose grace ended (all of them with
  // all=true). Returns the next deadline, or Clock::time_point::max(). With doomed, the
  // data files' paths (each a version's own name, never reused) are handed over instead,
  // for the caller to unlink without the lock (freeing a large tmpfs file takes a while).
  Clock::time_point purge_retired(bool all, std::vector<std::string>* doomed = nullptr);
  // Re-writes v's .meta (after RENAME, or when v becomes partial) so a recovery uses the
  // current path and kind.
  void rewrite_meta(const Version& v);
  // Marks v partial (sticky) and records it in its .meta.
  void mark_partial(Version& v);
  // Adds the extents file `name` (a base name in the session dir, named for v) to v's
  // extents; the file is kept until v is forgotten. A bad name or file: logged, the file
  // removed, v's extents unknown. Small I/O on tmpfs.
  void absorb_extents(Version& v, const std::string& name);
  // Writes v.extents to a new extents file of v (snapshots, inherited extents), so a
  // recovery finds them. False (logged; v's extents then unknown) on failure.
  bool persist_extents(Version& v);
  // Adds the hints file `name` (a base name in the session dir, named for v) to v's hints;
  // kept until v is forgotten. A bad name or file: logged and ignored (a name of v's: the
  // file is removed). Hints never fail a version.
  void absorb_hints(Version& v, const std::string& name);
  // Writes v.hints to a new hints file of v (snapshots), so a recovery finds them.
  void persist_hints(Version& v);
  // Anything open, closed or committing (idle exit waits for none).
  bool busy() const;
  // Bytes held in staging by every version (open ones measured now).
  uint64_t staged_bytes() const;
  void update_pending_gauge() { stats_.pending_versions = versions.size(); }

  const Config& cfg() const { return cfg_; }
  Stats& stats() { return stats_; }
  const std::string& session_dir() const { return dir_; }

 private:
  const Config& cfg_;
  Stats& stats_;
  std::string dir_;
  // path -> vids of its versions: the lookups by path of every OPEN and STAT (newest,
  // open_for_write, pending_of) cost a map search, not a scan of every version held
  // (thousands of small files closed and not yet committed). Versions put into
  // `versions` without add() (a recovery) are indexed at the next lookup: a size that
  // differs from indexed_ rebuilds it.
  std::map<std::string, std::set<uint64_t>> by_path_;
  size_t indexed_ = 0;
  void index_all_if_stale();
  template <class F>
  void for_each_of(const std::string& path, F&& f);
  std::vector<std::pair<Clock::time_point, std::string>> retired_;  // deadline, data path
  std::map<std::string, Clock::time_point> views_;                  // read view, deadline
  std::function<void(const std::string&)> view_released_;
  std::set<std::pair<Clock::time_point, std::string>> view_order_;  // the same by deadline
};

int64_t realtime_ns_of(const struct timespec& ts);
// What v's .meta records.
VersionMeta meta_of(const Version& v);

}  // namespace ckptfwd::fwd
