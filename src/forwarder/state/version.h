// One version of a file the forwarder holds (State::versions): a file opened for writing,
// from its OPEN until its bytes are committed or dropped. Its fields come in five parts, one
// per concern; each part says who writes it. Every field of every part is guarded by
// State::mu: the threads that touch a version (the connection threads running the verbs,
// the batcher, a batch's lane in the committer, a recovery at start) do so only with it
// held, and the pipeline works on copies (BatchFile, pipeline/pipeline.h), never on a
// Version. Version derives from the parts so that code names a field as v.field whatever
// part it is in.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "forwarder/staging/extents.h"
#include "forwarder/staging/hints.h"

namespace ckptfwd::fwd {

using Clock = std::chrono::steady_clock;

// Committed versions leave the map (their staged files are deleted); so does a dropped
// version unless a client still writes it (kOpen) or the pipeline holds it (kCommitting).
enum class VState { kOpen, kClosed, kCommitting, kFailed };

// What the version is: set by State::add (or a recovery) and fixed after, except path
// (State::set_path, at a RENAME) and mode (CHMOD, or the staged file's at close).
struct VersionIdentity {
  uint64_t vid = 0;
  uint64_t order = 0;  // newest-wins order among versions of a path (a snapshot of an
                       // open version is older than the version that keeps being written)
  std::string path;    // current path (RENAME changes it)
  int rank = -1;
  long pid = 0;
  uint64_t client = 0;  // connection that opened it (0: recovered)
  uint32_t mode = 0644;
  std::string data_path, meta_path;
};

// Who still writes it: the OPEN, CLOSE and disconnect of the verbs (verbs/open_verb.cc,
// verbs/lifecycle_verbs.cc) and the orphan reaper (verbs/orphans.cc).
struct VersionHolds {
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
  // (Service::reap_orphans, verbs/orphans.cc). A version closes only when holders and
  // orphans are both empty, so a lost connection never turns a half-written file into a
  // closed version.
  std::map<long, int> orphans;
  long closer_pid = 0;  // the process whose CLOSE closed it (its exit wait waits for it)
  // OPENs that joined it while it was open (Service::join_write). Whether it is unchanged
  // since its last fsync is told by a hash taken without the state lock: a writer that
  // joined meanwhile may have written through a mapping, which changes neither the size
  // nor (on tmpfs) the mtime, so a hash from before its join tells nothing.
  uint64_t joins = 0;
  // Hashes of its staged file running without the state lock (Service::hash_if_synced):
  // a CLOSE that holds no reference to it (re-sent after a reconnect while an fsync
  // hashes) waits for them, so it is not answered before the version is settled.
  int hashing = 0;
};

// fsync: the snapshots an fsync of an open version commits, and whether a closed version
// still holds its last snapshot's bytes. Written by SYNC (verbs/wait_verbs.cc), the
// batcher's settle_unchanged and the committer (synced, once the snapshot is committed).
struct VersionFsync {
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
  // Closed with the size, mode and mtime of its committed fsync snapshot: the batcher
  // hashes it before anything else (Service::settle_unchanged) and forgets it if it holds
  // the snapshot's bytes. Counted in State::unchanged_checks.
  bool check_unchanged = false;
};

// Which bytes it holds and where they came from (a partial overlay of a file shared across
// nodes, a new file, a file opened on existing bytes): set at OPEN (verbs/open_verb.cc),
// grown at CLOSE and SYNC from the writers' extents and hints files (State::absorb_*),
// read by the batcher when it builds the BatchFile.
struct VersionCoverage {
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
  // The global arrays of the MPI-IO views the writes went through (base/view_shape.h),
  // each once; handed over and kept with the hints.
  std::vector<ViewShape> views{};
  std::vector<std::string> hint_files;
  bool started_from_existing = false;  // its starting bytes were the path's current ones
  // Partial, and the store named the path when it was opened (directly or through the
  // staged version it started from): if the store no longer names it at commit, another
  // node deleted (or renamed) the file meanwhile and this overlay must not resurrect it.
  bool based_on_store = false;
  uint64_t start_size = 0;  // their size
  // Another node's forwarder owns the path (forwarder/group/group.h): this version is a
  // copy of the owner's version owner_vid, written here and handed to the owner at its
  // close (its extents only), never committed here unless the owner cannot be reached.
  std::string owner_addr;
  uint64_t owner_vid = 0;
};

// Where it is in its life: opened, closed (the verbs), sealed into a batch and committed or
// failed (the batcher and the committer), dropped (RENAME, UNLINK, ABANDON, a newer version).
struct VersionLifecycle {
  VState state = VState::kOpen;
  bool ready = true;  // false while its starting bytes are copied in (then invisible)
  // A leased open's version (wire/lease.h): described in the session's journal
  // (staging/lease_journal_writer.h), not in a .meta: "lease" from its lease until its
  // CLOSE (a recovery leaves the staged file to the client), then as a .meta would be.
  bool journaled = false;
  bool dropped = false;  // superseded, unlinked or abandoned: never committed
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t close_seq = 0;  // batches take versions in close order
  uint64_t wave = 0;       // its checkpoint wave (batching/waves.h), set by the batcher once closed
  Clock::time_point closed_at{};
  Clock::time_point opened_at{};
  int64_t opened_ns = 0;  // CLOCK_REALTIME at the open, kept in the .meta (VersionMeta)
  uint32_t failures = 0;  // failed commit attempts (waiters compare against it)
  int error = 0;
  Clock::time_point retry_at{};
  // The store whose close-to-open journal names it as closed and not yet committed
  // (forwarder/state/pending_journal.h); "" when none does. forget() settles it there.
  std::string pending_store;
};

struct Version : VersionIdentity, VersionHolds, VersionFsync, VersionCoverage, VersionLifecycle {};

}  // namespace ckptfwd::fwd
