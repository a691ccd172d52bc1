// The forwarder's shared state: every file version it holds, the per-store catalogs, and
// the lock + condition variables everyone synchronises on. One mutex keeps the semantics
// simple (rename/unlink/commit see one consistent picture); nothing slow runs under it
// except small file-system calls on tmpfs and manifest appends.
#pragma once
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/config.h"
#include "forwarder/state/catalog_cache.h"
#include "forwarder/state/ckpt_cost.h"
#include "forwarder/staging/extents.h"
#include "forwarder/staging/hints.h"
#include "forwarder/state/pending_journal.h"
#include "forwarder/staging/staging.h"
#include "forwarder/state/stats.h"

namespace ckptfwd::fwd {

using Clock = std::chrono::steady_clock;

// Committed versions leave the map (their staged files are deleted); so does a dropped
// version unless a client still writes it (kOpen) or the pipeline holds it (kCommitting).
enum class VState { kOpen, kClosed, kCommitting, kFailed };

struct Version {
  uint64_t vid = 0;
  uint64_t order = 0;  // newest-wins order among versions of a path (a snapshot of an
                       // open version is older than the version that keeps being written)
  std::string path;    // current path (RENAME changes it)
  int rank = -1;
  long pid = 0;
  uint64_t client = 0;  // connection that opened it (0: recovered)
  // While kOpen: open references per connection (one per OPEN that created or joined
  // it; CLOSE or a disconnect releases them). The version closes when none is left, so
  // concurrent writers of one path share one version and one staged file, as POSIX
  // writers share one file (MPI-IO N->1, two opens in one process).
  struct Hold {
    long pid = 0;  // the process on that connection (what a recovery can name)
    int refs = 0;
  };
  std::map<uint64_t, Hold> holders;
  // Open references of processes whose connection is gone while they live on (the
  // forwarder was restarted, or the application closed the library's socket): keyed by
  // pid, released by that pid's CLOSE on a new connection, or when the process is gone
  // (forwarder/verbs/orphans.h). A version closes only when holders and orphans are both empty,
  // so a lost connection never turns a half-written file into a closed version.
  std::map<long, int> orphans;
  long closer_pid = 0;  // the process whose CLOSE closed it (its exit wait waits for it)
  // The store whose close-to-open journal names it as closed and not yet committed
  // (forwarder/state/pending_journal.h); "" when none does. forget() settles it there.
  std::string pending_store;
  // fsync of an open version commits a snapshot of it (a version of its own). If the
  // version is closed unchanged after that, the committed snapshot is all there is to
  // keep: it is not committed a second time (fsync, close, rename pays once).
  uint64_t snapshot_of = 0;              // on a snapshot: the open version it copies
  uint64_t last_snapshot = 0;            // on an open version: its newest snapshot
  Clock::time_point snapshot_started{};  // on a snapshot: when the fsync began making it
  // A snapshot whose staged file is a hard link to its open version's, not a copy (an
  // fsync costs no copy): its bytes may still change while it is committed, so the
  // pipeline reads them into private memory once (BatchFile.live) and commits exactly
  // what it read, bytes of the fsync's time or later. It has no .meta: a recovery
  // commits the open version instead, which holds every byte it has.
  bool live_source = false;
  // A live snapshot too large to read into memory (Config.snapshot_read_max): the pipeline
  // commits it from the staged file in place and copies it only if it changed meanwhile
  // (forwarder/pipeline/in_place.h).
  bool in_place = false;
  std::vector<long> writer_pids;  // on such a snapshot: its open version's writers then
  // SYNC calls waiting for this version: the batcher seals it at once (batcher.h).
  int sync_waiters = 0;
  struct Synced {
    bool valid = false;
    std::string path, container;  // what the catalog names after the snapshot's commit
    uint32_t file_index = 0, mode = 0;
    uint64_t size = 0, hash = 0;
    int64_t mtime_ns = 0;
  } synced;
  // OPENs that joined it while it was open (Service::join_write). Whether it is unchanged
  // since its last fsync is told by a hash taken without the state lock: a writer that
  // joined meanwhile may have written through a mapping, which changes neither the size
  // nor (on tmpfs) the mtime, so a hash from before its join tells nothing.
  uint64_t joins = 0;
  // Hashes of its staged file running without the state lock (Service::hash_if_synced):
  // a CLOSE that holds no reference to it (re-sent after a reconnect while an fsync
  // hashes) waits for them, so it is not answered before the version is settled.
  int hashing = 0;
  // Closed with the size, mode and mtime of its committed fsync snapshot: the batcher
  // hashes it before anything else (Service::settle_unchanged) and forgets it if it holds
  // the snapshot's bytes. Counted in State::unchanged_checks.
  bool check_unchanged = false;
  uint32_t mode = 0644;
  std::string data_path, meta_path;
  // A file shared across nodes (OPEN "shared"; sticky once set): committed as an overlay
  // of the bytes this node wrote, `extents` (the union of what the writers handed over),
  // clipped to the staged size. extents_unknown: some writer's extents never arrived (it
  // died, or wrote through stdio or a plain open): the staged file's data extents are
  // added at commit (page granular: may cover another node's bytes in shared pages).
  bool partial = false;
  bool extents_unknown = false;
  // A new file (nothing staged, on the store or on disk at its open, and not shared across
  // nodes): committed with a `create` record (manifest.h), which stacks it on whatever
  // another node committed under that name meanwhile, so the same new file written by
  // ranks of several nodes with plain POSIX calls (N-1 with pwrite) keeps every node's
  // bytes, as on a PFS. Its writers hand over their extents (the OPEN reply asks); where
  // some are unknown (stdio writers) the staged file's data extents stand in, exact on
  // one node, page granular across nodes.
  bool created = false;
  Extents extents{};
  std::vector<std::string> ext_files;  // extents files kept until the version is forgotten
  // [0, whole_prefix) is among `extents` without a file: a writer handed it over inline at
  // CLOSE ("whole=", protocol.h); the .meta keeps it for a recovery. -1: none.
  int64_t whole_prefix = -1;
  // Takes [0, end) into `extents` and whole_prefix (end >= 0; 0: nothing written).
  void add_whole_prefix(int64_t end) {
    if (end > 0) extents_union(extents, {{0, static_cast<uint64_t>(end)}});
    whole_prefix = std::max(whole_prefix, end);
  }
  // Dtype hints handed over so far (merged, later records winning), committed as
  // FileEntry.hints; their files are kept until the version is forgotten (recovery).
  Hints hints{};
  std::vector<std::string> hint_files;
  bool started_from_existing = false;  // its starting bytes were the path's current ones
  // Partial, and the store named the path when it was opened (directly or through the
  // staged version it started from): if the store no longer names it at commit, another
  // node deleted (or renamed) the file meanwhile and this overlay must not resurrect it.
  bool based_on_store = false;
  uint64_t start_size = 0;  // their size
  VState state = VState::kOpen;
  bool ready = true;     // false while its starting bytes are copied in (then invisible)
  bool dropped = false;  // superseded, unlinked or abandoned: never committed
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t close_seq = 0;  // batches take versions in close order
  uint64_t wave = 0;       // its checkpoint wave (waves.h), assigned by the batcher once closed
  Clock::time_point closed_at{};
  Clock::time_point opened_at{};
  uint32_t failures = 0;  // failed commit attempts (waiters compare against it)
  int error = 0;
  Clock::time_point retry_at{};
};

class State {
 public:
  State(const Config& cfg, Stats& stats, std::string session_dir);

  std::mutex mu;
  std::condition_variable work_cv;      // the batcher: a close, a waiter, a stop
  std::condition_variable done_cv;      // waiters: a version committed, failed or dropped
  std::condition_variable manifest_cv;  // a store's manifest turn was given back (manifest_turn.h)

  // ---- everything below: mu held ----
  std::map<uint64_t, Version> versions;
  // Versions closed by a process on a connection that is gone (or by a previous forwarder
  // of the session, from their .meta): that process's WAITALL on its next connection
  // waits for them too, so the exit wait survives a reconnect. Pruned by forget().
  std::map<long, std::set<uint64_t>> closed_by_pid;
  CatalogCache catalogs;
  // Stores whose MANIFEST a thread is appending to without the lock (manifest_turn.h).
  std::set<std::string> manifest_busy;
  PendingJournal pending;  // close-to-open across nodes (pending_journal.h)
  CheckpointCosts costs;   // what each checkpoint cost the application (ckpt_cost.h)
  // Stores with containers that may have become garbage (CKPTFWD_KEEP, forwarder/commit/gc.h).
  std::set<std::string> gc_due;
  bool gc_running = false;  // collect_due_garbage is at work (DRAIN waits for it)
  uint64_t next_vid = 1;
  uint64_t next_order = 1;
  uint64_t next_close_seq = 1;
  uint64_t next_ext_seq = 1;  // extents files the forwarder writes itself (pid field 0)
  Clock::time_point last_close{};
  // When the batcher thread wakes next by itself, while it sleeps (max: not sleeping, it
  // looks again anyway), and the bytes closed since its last pick: mark_closed wakes it
  // only when a close could make a batch due sooner than that (most closes of a process
  // writing many small files cannot: each wake-up cost ~15% of such a run).
  Clock::time_point batcher_sleeps_until = Clock::time_point::min();
  uint64_t closed_bytes_unpicked = 0;
  // Whether v, just closed, needs the batcher thread woken (mark_closed).
  bool close_wakes_batcher(const Version& v) const;
  int waiters = 0;           // threads blocked until commits (the batcher then seals fast)
  int sync_waiting = 0;      // of them SYNCs (Version::sync_waiters summed over versions)
  int unchanged_checks = 0;  // versions with Version::check_unchanged set
  int clients = 0;           // connected clients
  bool draining = false;     // exit drain: seal everything now
  bool shutdown = false;     // waiters give up (EIO)
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
  // The version of path open for writing (not dropped), or null; *preparing is set if
  // one exists that is still being prepared (its starting bytes copied in).
  Version* open_for_write(const std::string& path, bool* preparing);
  // Every not-dropped version of path (including ones still being prepared).
  std::vector<Version*> pending_of(const std::string& path);
  // Renames v (RENAME of its path): keeps the by-path index in step. Never assign
  // Version::path of a version in `versions` directly.
  void set_path(Version& v, const std::string& to);
  // A new version (state kOpen, ready) with vid, order and staged file names assigned.
  Version& add(const std::string& path, int rank, long pid, uint64_t client, uint32_t mode);
  // Marks v closed with the size and mtime of its staged file; wakes the batcher.
  // Takes the mode from the staged file if the application changed it there (unless
  // mode_from_file is false: a recovered file's .meta is the authority).
  void mark_closed(Version& v, bool mode_from_file = true);
  // Drops v: never committed. Deletes its staged files and forgets it unless a client or
  // the pipeline still holds it. v may be dangling afterwards.
  void drop(Version& v);
  // Forgets v and deletes its staged files (after commit, or a dropped version released);
  // the data file after retire_grace.
  void forget(uint64_t vid);
  // view is being served: kept until view_grace after now, or for as long as it is being
  // restored (restoring: its deadline is set again when the restore is done).
  void serve_view(const std::string& view, bool restoring);
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
  std::set<std::pair<Clock::time_point, std::string>> view_order_;  // the same by deadline
};

int64_t realtime_ns_of(const struct timespec& ts);
// What v's .meta records.
VersionMeta meta_of(const Version& v);

}  // namespace ckptfwd::fwd
