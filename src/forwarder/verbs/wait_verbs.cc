// SYNC, WAITALL and DRAIN: the verbs that return only once data is committed on the store.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "forwarder/pipeline/in_place.h"
#include "forwarder/staging/staging.h"
#include "forwarder/util/kill_point.h"
#include "forwarder/util/log.h"
#include "forwarder/util/test_hooks.h"
#include "forwarder/verbs/service.h"

namespace ckptfwd::fwd {

int Service::wait_committed(std::unique_lock<std::mutex>& lk, const std::vector<uint64_t>& vids) {
  State& s = c_.state;
  struct Wait {
    uint64_t vid;
    uint32_t failures;
  };
  std::vector<Wait> ws;
  for (uint64_t vid : vids) {
    Version* v = s.find(vid);
    if (!v || v->dropped || v->state == VState::kOpen) continue;
    if (v->state == VState::kFailed) {
      // Someone waits for it: try again now instead of at the next retry time.
      v->state = VState::kClosed;
      v->closed_at = Clock::now();
    }
    ws.push_back({vid, v->failures});
  }
  if (ws.empty()) return 0;
  s.waiters++;
  s.work_cv.notify_all();
  int rc = 0;
  bool pending = true;
  while (pending) {
    pending = false;
    for (Wait& w : ws) {
      if (!w.vid) continue;
      Version* v = s.find(w.vid);
      if (!v || v->dropped) {
        w.vid = 0;  // committed (or superseded: nothing to make durable)
      } else if (v->failures > w.failures) {
        rc = v->error ? v->error : EIO;
        w.vid = 0;
      } else {
        pending = true;
      }
    }
    if (pending && s.shutdown) {
      rc = EIO;
      break;
    }
    if (pending) s.done_cv.wait(lk);
  }
  s.waiters--;
  return rc;
}

uint64_t Service::snapshot(std::unique_lock<std::mutex>& lk, uint64_t vid) {
  State& s = c_.state;
  Version* v = s.find(vid);
  Version& snap = add_snapshot_of(*v);
  uint64_t svid = snap.vid;
  std::string src_path = v->data_path, dst_path = snap.data_path;
  // The processes that may write the file while it is committed in place.
  const std::string app_path = v->path;
  std::vector<long> writers{v->pid};
  for (const auto& [client, hold] : v->holders) writers.push_back(hold.pid);
  for (const auto& [pid, refs] : v->orphans) writers.push_back(pid);
  // Opened under the lock: a drop of the open version meanwhile (its path unlinked or
  // replaced) unlinks the staged file, and the copy below still reads it through this fd.
  int src = ::open(src_path.c_str(), O_RDONLY | O_CLOEXEC);
  lk.unlock();
  kill_point(c_.session_dir, "sync-copy");
  if (test_hooks().during_snapshot) test_hooks().during_snapshot();
  SnapshotFile file = make_snapshot_file(vid, app_path, src, src_path, dst_path, writers);
  if (src >= 0) ::close(src);
  lk.lock();
  return finish_snapshot(vid, svid, file, std::move(writers));
}

Version& Service::add_snapshot_of(Version& v) {
  State& s = c_.state;
  Version& snap = s.add(v.path, v.rank, v.pid, v.client, v.mode);
  snap.snapshot_of = v.vid;
  snap.snapshot_started = Clock::now();
  // A partial version's snapshot commits the extents handed over so far (the writers'
  // SYNCs bring theirs), as an overlay.
  snap.partial = v.partial;
  snap.extents = v.extents;
  snap.extents_unknown = v.extents_unknown;
  snap.created = v.created;
  // The open version keeps its own hints and views (and their files) for its commit.
  snap.hints = v.hints;
  snap.views = v.views;
  v.last_snapshot = snap.vid;
  v.synced.valid = false;
  // The still-open version keeps being written, so it must stay the newest of its path.
  std::swap(snap.order, v.order);
  snap.ready = false;
  return snap;
}

Service::SnapshotFile Service::make_snapshot_file(uint64_t vid, const std::string& app_path,
                                                  int src, const std::string& src_path,
                                                  const std::string& dst_path,
                                                  const std::vector<long>& writers) {
  // No copy: the snapshot's staged file is a second name of the open version's, and the
  // pipeline reads its bytes once into private memory (Version::live_source). No .meta
  // is ever written for it: a crash leaves a staged file without one, which a recovery
  // deletes, and the open version it names is recovered with every byte.
  // The private memory is the file's size: a file larger than Config.snapshot_read_max is
  // read in place instead (in_place.h), so the forwarder's resident memory stays bounded
  // whatever the checkpoint's size and the fsync copies nothing. Not when a writer maps
  // the file shared and writable: its writes could not be seen; it is copied then.
  SnapshotFile f;
  struct stat src_st;
  const bool sized = src >= 0 && ::fstat(src, &src_st) == 0;
  f.small = sized && static_cast<uint64_t>(src_st.st_size) <= c_.cfg.snapshot_read_max;
  const bool mapped =
      sized && !f.small && mapped_writable_by(writers, src_st.st_dev, src_st.st_ino);
  if (mapped)
    LOG_DEBUG("fsync of v%llu (%s): a writer maps it shared and writable: copying it",
              static_cast<unsigned long long>(vid), app_path.c_str());
  f.live = sized && !mapped && ::link(src_path.c_str(), dst_path.c_str()) == 0;
  f.ok = f.live;
  if (f.live) return f;
  if (sized && !mapped)
    LOG_DEBUG("cannot link %s to %s (%s): copying it for the fsync", src_path.c_str(),
              dst_path.c_str(), strerror(errno));
  if (src < 0) {
    f.err = "cannot open " + src_path + ": " + strerror(errno);
    return f;
  }
  const int64_t t0 = monotonic_ns();
  // No .meta until it is complete (mark_closed writes it): a crash mid-copy leaves a
  // staged file without one, which a recovery deletes.
  f.ok = copy_staged_file(src, dst_path, &f.err);
  if (f.ok) c_.stats.fsync_copies++;
  LOG_DEBUG("fsync of v%llu: snapshot copied (%llu bytes) in %.1f ms",
            static_cast<unsigned long long>(vid), static_cast<unsigned long long>(src_st.st_size),
            (monotonic_ns() - t0) / 1e6);
  return f;
}

uint64_t Service::finish_snapshot(uint64_t vid, uint64_t svid, const SnapshotFile& file,
                                  std::vector<long> writers) {
  State& s = c_.state;
  Version* sv = s.find(svid);
  if (!sv) {
    // Dropped with its path meanwhile (unlinked or replaced): nothing left to make durable.
    const Version* open = s.find(vid);
    return !open || open->dropped ? kSnapshotSuperseded : 0;
  }
  if (!file.ok) {
    const bool gone = sv->dropped;  // superseded meanwhile: its bytes are not needed
    if (!gone)
      LOG_ERROR("cannot snapshot v%llu for fsync: %s", static_cast<unsigned long long>(vid),
                file.err.c_str());
    s.forget(svid);
    return gone ? kSnapshotSuperseded : 0;
  }
  sv->live_source = file.live;
  sv->in_place = file.live && !file.small;
  if (sv->in_place) sv->writer_pids = std::move(writers);
  if (!file.live) {  // a copy of its own: recoverable like any closed version
    if ((sv->partial || sv->created) && !sv->extents.empty()) s.persist_extents(*sv);
    s.persist_hints(*sv);
  }
  sv->ready = true;
  // A second name shares the file's mode bits: the open version takes an fchmod the
  // library could not report at its own close (mark_closed), so the snapshot leaves them.
  s.mark_closed(*sv, !file.live);
  // A snapshot is a version of its own: counted so committed never exceeds captured.
  c_.stats.files_captured++;
  c_.stats.bytes_captured += sv->size;
  return svid;
}

Reply Service::sync(ClientCtx& cl, uint64_t vid, const std::string& ext, const std::string& hints,
                    int64_t blocked_ns) {
  int64_t arrived = monotonic_ns();
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  Version* v = s.find(vid);
  if (!v || v->dropped || v->state != VState::kOpen) {
    if (!ext.empty() && is_extents_file_name(ext, vid))
      ::unlink((c_.session_dir + "/" + ext).c_str());
    if (!hints.empty() && is_hints_file_name(hints, vid))
      ::unlink((c_.session_dir + "/" + hints).c_str());
    if (!v || v->dropped) return reply_ok();
  } else {
    if (!ext.empty()) s.absorb_extents(*v, ext);
    if (!hints.empty()) s.absorb_hints(*v, hints);
    // A copy of another node's version (remote_verbs.cc): the owner makes it durable.
    if (!v->owner_addr.empty()) {
      int rc = hand_to_owner(lk, vid, false);
      if (rc >= 0) return rc ? reply_err(rc) : reply_ok();
      v = s.find(vid);  // the owner is gone: its fsync snapshot commits here
      if (!v || v->dropped) return reply_ok();
    }
  }
  // Nothing written since the last fsync's snapshot was committed: it stands. The hash of
  // the whole staged file that tells runs without the lock; the version is looked at anew
  // afterwards (its path may have been unlinked meanwhile, or its last writer closed it).
  std::optional<SyncedHash> hashed;
  if (v->state == VState::kOpen) {
    hashed = hash_if_synced(lk, *v);
    v = s.find(vid);
    if (!v || v->dropped) return reply_ok();  // committed or superseded meanwhile
  }
  if (v->state == VState::kOpen) {
    struct stat st;
    if (::stat(v->data_path.c_str(), &st) == 0 &&
        matches_synced(*v, static_cast<uint64_t>(st.st_size), realtime_ns_of(st.st_mtim), hashed)) {
      LOG_DEBUG("fsync of v%llu (%s): unchanged since its last fsync, nothing to commit",
                static_cast<unsigned long long>(vid), v->path.c_str());
      s.costs.blocked(vid, cl.pid, blocked_ns + (monotonic_ns() - arrived));
      return reply_ok();
    }
    // fsync mid-write: make the bytes written so far durable as their own version.
    vid = snapshot(lk, vid);
    if (vid == kSnapshotSuperseded) return reply_ok();
    if (!vid) {
      c_.stats.errors++;
      return reply_err(EIO);
    }
  }
  // The batcher seals a version someone fsyncs at once, without a batch window.
  if (Version* w = s.find(vid)) w->sync_waiters++;
  s.sync_waiting++;
  int rc = wait_committed(lk, {vid});
  s.sync_waiting--;
  if (Version* w = s.find(vid)) w->sync_waiters--;
  // The snapshot's checkpoint: the writes before this fsync and the wait for its commit.
  if (s.costs.knows(vid) || s.find(vid))
    s.costs.blocked(vid, cl.pid, blocked_ns + (monotonic_ns() - arrived));
  return rc ? reply_err(rc) : reply_ok();
}

Reply Service::waitall(ClientCtx& cl) {
  int64_t arrived = monotonic_ns();
  kill_point(c_.session_dir, "waitall");
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  // What this connection closed, and what this process closed on a connection that is
  // gone (or before a forwarder restart): the exit wait survives a reconnect.
  std::set<uint64_t> mine = cl.closed;
  if (auto it = s.closed_by_pid.find(cl.pid); it != s.closed_by_pid.end())
    mine.insert(it->second.begin(), it->second.end());
  std::vector<uint64_t> waited(mine.begin(), mine.end());
  int rc = wait_committed(lk, waited);
  // What closes here handed to another node's owner: committed there (remote_verbs.cc).
  if (int orc = wait_owners(lk, waited); orc && !rc) rc = orc;
  // The exit wait (or a shared file's close) is part of the newest checkpoint it waited for.
  s.costs.blocked_on_newest(waited, cl.pid, monotonic_ns() - arrived);
  // Forget what is settled; failed versions stay so a later WAITALL reports them again.
  auto settled = [&s](uint64_t vid) {
    Version* v = s.find(vid);
    return !v || v->dropped;
  };
  std::erase_if(cl.closed, settled);
  if (auto it = s.closed_by_pid.find(cl.pid); it != s.closed_by_pid.end()) {
    std::erase_if(it->second, settled);
    if (it->second.empty()) s.closed_by_pid.erase(it);
  }
  return rc ? reply_err(rc) : reply_ok();
}

Reply Service::drain() {
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  std::vector<uint64_t> vids;
  for (auto& [vid, v] : s.versions)
    if (!v.dropped && v.state != VState::kOpen) vids.push_back(vid);
  int rc = wait_committed(lk, vids);
  // Drained also means the old containers CKPTFWD_KEEP lets go are gone (forwarder/commit/gc.h).
  while (!rc && (s.gc_running || !s.gc_due.empty()) && !s.shutdown) {
    s.work_cv.notify_all();
    s.done_cv.wait(lk);
  }
  return rc ? reply_err(rc) : reply_ok();
}

int Service::drain_all() {
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  s.draining = true;
  s.work_cv.notify_all();
  std::vector<uint64_t> vids;
  for (auto& [vid, v] : s.versions)
    if (!v.dropped && v.state != VState::kOpen) vids.push_back(vid);
  return wait_committed(lk, vids);
}

}  // namespace ckptfwd::fwd
