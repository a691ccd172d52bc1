// SYNC, WAITALL and DRAIN: the verbs that return only once data is committed on the store.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "forwarder/kill_point.h"
#include "forwarder/log.h"
#include "forwarder/service.h"
#include "forwarder/staging.h"

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
  int src = ::open(v->data_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (src < 0) return 0;
  Version& snap = s.add(v->path, v->rank, v->pid, v->client, v->mode);
  snap.snapshot_of = vid;
  // A partial version's snapshot commits the extents handed over so far (the writers'
  // SYNCs bring theirs), as an overlay.
  snap.partial = v->partial;
  snap.extents = v->extents;
  snap.extents_unknown = v->extents_unknown;
  snap.created = v->created;
  snap.hints = v->hints;  // the open version keeps its own (and its files) for its commit
  v->last_snapshot = snap.vid;
  v->synced.valid = false;
  // The still-open version keeps being written, so it must stay the newest of its path.
  std::swap(snap.order, v->order);
  snap.ready = false;
  uint64_t svid = snap.vid;
  std::string err;
  int fd = create_staged(snap.data_path, &err);
  // No .meta until the copy is complete (mark_closed below writes it): a crash mid-copy
  // leaves a staged file without one, which a recovery deletes.
  bool ok = fd >= 0;
  if (ok && (snap.partial || snap.created) && !snap.extents.empty()) s.persist_extents(snap);
  if (ok) s.persist_hints(snap);
  if (ok) {
    lk.unlock();
    kill_point(c_.session_dir, "sync-copy");
    ok = copy_fd(src, fd, &err);
    struct stat st;
    if (ok && ::fstat(src, &st) == 0) {  // the snapshot shows the file's own mtime
      struct timespec ts[2] = {st.st_atim, st.st_mtim};
      ::futimens(fd, ts);
    }
    lk.lock();
  }
  if (fd >= 0) ::close(fd);
  ::close(src);
  Version* sv = s.find(svid);
  if (!sv) return 0;
  if (!ok) {
    LOG_ERROR("cannot snapshot v%llu for fsync: %s", static_cast<unsigned long long>(vid),
              err.c_str());
    s.forget(svid);
    return 0;
  }
  sv->ready = true;
  s.mark_closed(*sv);
  // A snapshot is a version of its own: counted so committed never exceeds captured.
  c_.stats.files_captured++;
  c_.stats.bytes_captured += sv->size;
  return svid;
}

Reply Service::sync(ClientCtx&, uint64_t vid, const std::string& ext, const std::string& hints) {
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
  }
  if (v->state == VState::kOpen) {
    // fsync mid-write: make the bytes written so far durable as their own version.
    vid = snapshot(lk, vid);
    if (!vid) {
      c_.stats.errors++;
      return reply_err(EIO);
    }
  }
  int rc = wait_committed(lk, {vid});
  return rc ? reply_err(rc) : reply_ok();
}

Reply Service::waitall(ClientCtx& cl) {
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  // What this connection closed, and what this process closed on a connection that is
  // gone (or before a forwarder restart): the exit wait survives a reconnect.
  std::set<uint64_t> mine = cl.closed;
  if (auto it = s.closed_by_pid.find(cl.pid); it != s.closed_by_pid.end())
    mine.insert(it->second.begin(), it->second.end());
  int rc = wait_committed(lk, std::vector<uint64_t>(mine.begin(), mine.end()));
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
  // Drained also means the old containers CKPTFWD_KEEP lets go are gone (forwarder/gc.h).
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
