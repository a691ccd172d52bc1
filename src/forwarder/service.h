// The verbs of src/common/protocol.h, one method each. Called from the per-connection
// threads; every method takes the state lock itself. Replies are lists of fields.
#pragma once
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "common/protocol.h"
#include "forwarder/core.h"

namespace ckptfwd::fwd {

using Reply = std::vector<std::string>;

struct ClientCtx {
  uint64_t id = 0;
  long pid = 0;
  int rank = -1;
  std::set<uint64_t> closed;  // versions this connection closed (WAITALL waits for them)
};

Reply reply_ok(std::vector<std::string> more = {});
Reply reply_err(int err);
Reply reply_pass();

class Service {
 public:
  explicit Service(Core& core) : c_(core) {}

  // Parses one request and runs its verb. Malformed requests get ERR EINVAL.
  Reply handle(ClientCtx& cl, const wire::Fields& f);

  // shared: OPEN ... "shared" (protocol.h): the version is partial.
  Reply open(ClientCtx& cl, const std::string& path, int flags, unsigned mode, bool shared = false);
  // ext: the client's extents file for a shared version ("" if none). hints: the
  // client's dtype hints file (the base name after "hints=", "" if none). blocked_ns: the
  // time the client's calls on the version took ("blocked=", ckpt_cost.h); the time the
  // request waits here is added to it.
  Reply close(ClientCtx& cl, uint64_t vid, uint64_t size, const std::string& ext = "",
              const std::string& hints = "", int64_t blocked_ns = 0);
  Reply sync(ClientCtx& cl, uint64_t vid, const std::string& ext = "",
             const std::string& hints = "", int64_t blocked_ns = 0);
  Reply waitall(ClientCtx& cl);
  Reply abandon(ClientCtx& cl, uint64_t vid);
  Reply stat(const std::string& path);
  Reply rename(const std::string& from, const std::string& to);
  Reply unlink(const std::string& path);
  Reply list(const std::string& dir);
  Reply chmod(const std::string& path, uint32_t mode);
  // REFRESH (refresh_verb.cc): path's open partial version takes in the store's content.
  Reply refresh(const std::string& path);
  // The counters; with vars, the per-variable lines instead (var_stats.h).
  Reply stats(bool vars = false);
  Reply drain();
  // The connection went away: its still-open versions are closed as they are (a killed
  // rank leaves the partial file a direct write would have left).
  // A process that is still alive keeps its references (Version::orphans).
  void disconnect(ClientCtx& cl);
  // Releases the references of processes that are gone (lock held): versions nobody holds
  // any more are closed as written, as at a disconnect. Returns when to look again
  // (time_point::max() when no version is held by a process without a connection).
  Clock::time_point reap_orphans();
  // Exit drain: seals everything now and waits until nothing is closed or committing.
  // Returns 0 or EIO if some version failed.
  int drain_all();

 private:
  Reply open_write(ClientCtx& cl, const std::string& path, int flags, unsigned mode, bool shared);
  Reply open_read(const std::string& path);
  // Another OPEN for writing of a path whose version v is still open (lock held).
  Reply join_write(ClientCtx& cl, Version& v, int flags, bool shared);
  // How far a staged file may grow (-1: no limit). Lock held.
  long long stage_budget();
  // Waits (lock held through lk) until each vid is committed or dropped (0), or fails a
  // commit attempt that started after the wait began (EIO). Failed versions are requeued.
  int wait_committed(std::unique_lock<std::mutex>& lk, const std::vector<uint64_t>& vids);
  // v (just closed) holds exactly the bytes its last fsync snapshot committed, and the
  // catalog still names that snapshot: v is forgotten instead of committed again.
  bool unchanged_since_sync(Version& v);
  // v's staged file, with this size and mtime, holds exactly the bytes its last fsync
  // snapshot committed, and the catalog still names that snapshot (not for partial
  // versions). Reads the file with pread (a writer may cut it meanwhile). Lock held.
  bool matches_synced(const Version& v, uint64_t size, int64_t mtime_ns);
  // v (partial, just closed) started from the path's bytes and changed nothing: forgotten.
  bool unchanged_partial(Version& v);
  // CLOSE of a partial version: its extents file, or none (extents unknown then). Lock held.
  void take_extents(Version& v, const std::string& ext);
  // A closed snapshot of still-open version v (fsync mid-write): a second name of its
  // staged file (Version::live_source), or a copy where none can be made; its vid, 0 on
  // failure, or kSnapshotSuperseded when the path was unlinked or replaced meanwhile
  // (an fsync then has nothing to make durable, as if that had happened before it).
  static constexpr uint64_t kSnapshotSuperseded = UINT64_MAX;
  uint64_t snapshot(std::unique_lock<std::mutex>& lk, uint64_t vid);
  // Close-to-open across nodes (pending_journal.h): v, just closed, is noted as not on
  // the store yet; an open here of a path another node closed waits for its commit.
  void note_pending(Version& v);
  void await_other_nodes(std::unique_lock<std::mutex>& lk, const std::string& path);
  // Closes vid, which no process holds any more (pid: the last one), as written.
  void close_unheld(uint64_t vid, long pid);
  // Stages catalog entry e of store as a new closed version of path (cross-store rename).
  bool stage_from_catalog(std::unique_lock<std::mutex>& lk, const std::string& store,
                          const CatalogEntry& e, const std::string& path);

  Core& c_;
};

}  // namespace ckptfwd::fwd
