// CLOSE, ABANDON and a connection going away: the end of a write version's life on the
// client side.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <thread>

#include "forwarder/commit/manifest_turn.h"
#include "forwarder/staging/extents.h"
#include "forwarder/staging/staging.h"
#include "forwarder/state/fate_file.h"
#include "forwarder/util/kill_point.h"
#include "forwarder/util/log.h"
#include "forwarder/util/process_alive.h"
#include "forwarder/util/store_paths.h"
#include "forwarder/util/test_hooks.h"
#include "forwarder/util/worker_pool.h"
#include "forwarder/verbs/service.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd {

bool Service::settle_or_defer_unchanged(Version& v) {
  // A partial version commits an overlay of its extents: a whole-file comparison with the
  // snapshot says nothing about them (the snapshot may hold fewer extents).
  if (v.partial) return unchanged_partial(v);
  if (!synced_record_stands(v, v.size, v.mtime_ns)) return false;
  // Size and mtime alone do not tell: a write through a mapping to tmpfs changes neither.
  v.check_unchanged = true;
  c_.state.unchanged_checks++;
  c_.state.work_cv.notify_all();
  note_pending(v);  // closed and not on the store, until settled
  return true;
}

void Service::settle_unchanged(std::unique_lock<std::mutex>& lk) {
  State& s = c_.state;
  struct Check {
    uint64_t vid = 0;
    std::string data_path;
    uint64_t size = 0, hash = 0;
    bool read = false;
  };
  std::vector<Check> checks;
  for (auto& [vid, v] : s.versions)
    if (v.check_unchanged && v.state == VState::kClosed && !v.dropped) {
      v.state = VState::kCommitting;  // no batch takes it while it is hashed
      checks.push_back({vid, v.data_path, v.size, 0, false});
    }
  s.unchanged_checks = 0;
  if (checks.empty()) return;
  lk.unlock();
  // On the compression workers: many ranks closing large files at once are hashed side
  // by side, as their CLOSEs once were. The batcher waits for them (an fsync's batch
  // too): ahead of the tasks of a batch in flight (worker_pool.h).
  WorkerPool::UrgentScope urgent;
  pool_for(c_.workers, checks.size(), [&checks](size_t i) {
    Check& c = checks[i];
    c.read = hash_staged(c.data_path, c.size, &c.hash);
  });
  if (test_hooks().during_synced_hash) test_hooks().during_synced_hash();
  lk.lock();
  for (const Check& c : checks) {
    Version* v = s.find(c.vid);
    if (!v) continue;
    v->check_unchanged = false;
    if (v->state == VState::kCommitting) v->state = VState::kClosed;
    if (v->dropped) {  // unlinked or replaced meanwhile: nothing to keep
      s.forget(c.vid);
      continue;
    }
    // Renamed meanwhile, or its snapshot replaced in the catalog: committed as it is.
    if (c.read && c.size == v->size && c.hash == v->synced.hash &&
        synced_record_stands(*v, v->size, v->mtime_ns)) {
      LOG_DEBUG("v%llu of %s closed unchanged since its fsync: its committed snapshot stands",
                static_cast<unsigned long long>(v->vid), v->path.c_str());
      s.costs.forgotten(v->vid, v->last_snapshot);  // that snapshot is the checkpoint
      s.forget(c.vid);
      continue;
    }
    c_.stats.files_captured++;
    c_.stats.bytes_captured += v->size;
  }
  s.done_cv.notify_all();
}

bool Service::synced_record_stands(const Version& v, uint64_t size, int64_t mtime_ns) {
  const Version::Synced& sy = v.synced;
  if (v.partial || !sy.valid || sy.path != v.path || sy.size != size || sy.mode != v.mode ||
      sy.mtime_ns != mtime_ns)
    return false;
  const CatalogEntry* e = c_.state.catalogs.find(store_for(c_.cfg, v.path), v.path);
  // Renamed, unlinked or replaced meanwhile: the catalog names something else.
  return e && e->container == sy.container && e->file_index == sy.file_index && e->size == sy.size;
}

std::optional<Service::SyncedHash> Service::hash_if_synced(std::unique_lock<std::mutex>& lk,
                                                           Version& v) {
  // No committed fsync snapshot to compare with (most closes): not even a stat.
  if (v.partial || !v.synced.valid) return std::nullopt;
  struct stat st;
  if (::stat(v.data_path.c_str(), &st) != 0) return std::nullopt;
  SyncedHash h;
  h.size = static_cast<uint64_t>(st.st_size);
  h.mtime_ns = realtime_ns_of(st.st_mtim);
  if (!synced_record_stands(v, h.size, h.mtime_ns)) return std::nullopt;
  h.vid = v.vid;
  h.joins = v.joins;
  const std::string data_path = v.data_path;
  // A whole-file read (hundreds of ms for GiBs): every other request would wait for it
  // under the lock. Unlinked meanwhile (the path dropped): the read fails, not unchanged.
  v.hashing++;
  lk.unlock();
  const int64_t t0 = monotonic_ns();
  h.ok = hash_staged(data_path, h.size, &h.hash);
  LOG_DEBUG(
      "v%llu: hashed its %llu bytes without the state lock in %.1f ms (unchanged since "
      "its last fsync?)",
      static_cast<unsigned long long>(h.vid), static_cast<unsigned long long>(h.size),
      (monotonic_ns() - t0) / 1e6);
  if (test_hooks().during_synced_hash) test_hooks().during_synced_hash();
  lk.lock();
  if (Version* w = c_.state.find(h.vid)) w->hashing--;
  c_.state.done_cv.notify_all();  // a CLOSE waiting for this hash (close)
  return h;
}

bool Service::matches_synced(const Version& v, uint64_t size, int64_t mtime_ns,
                             const std::optional<SyncedHash>& hashed) {
  if (!synced_record_stands(v, size, mtime_ns)) return false;
  // The hash was taken without the lock: it speaks for the bytes now only if the file has
  // the size and mtime it had then and no writer joined since (one writing through a
  // mapping to tmpfs changes neither). Otherwise v is committed again: costly, never wrong.
  return hashed && hashed->ok && hashed->vid == v.vid && hashed->joins == v.joins &&
         hashed->size == size && hashed->mtime_ns == mtime_ns && hashed->hash == v.synced.hash;
}

// A partial version that started from the path's current bytes, got no writes and kept
// its size (a restart's read-write open of a shared file) has nothing to commit.
bool Service::unchanged_partial(Version& v) {
  if (!v.started_from_existing || !v.extents.empty() || v.extents_unknown || v.size != v.start_size)
    return false;
  LOG_DEBUG("v%llu of %s (shared across nodes) closed without writes: nothing to commit",
            static_cast<unsigned long long>(v.vid), v.path.c_str());
  c_.state.forget(v.vid);
  return true;
}

void Service::take_extents(Version& v, const std::string& ext, int64_t whole) {
  if (!v.partial && !v.created) {
    // Sent by a leased open's writer, which records them before it knows (wire/lease.h):
    // a rewrite of an existing file is committed whole.
    if (!ext.empty() && is_extents_file_name(ext, v.vid))
      ::unlink((c_.session_dir + "/" + ext).c_str());
    return;
  }
  if (whole >= 0 && ext.empty() && (v.partial || v.created)) {
    // Written front to back: no file to read (or to keep for a recovery: the .meta says it).
    v.add_whole_prefix(whole);
  } else if (!ext.empty()) {
    c_.state.absorb_extents(v, ext);
  } else if (v.created && !v.extents_unknown) {
    v.extents_unknown = true;  // a stdio writer: the data extents are exact on one node
  } else if (v.partial && !v.extents_unknown) {
    LOG_WARN(
        "v%llu of %s (shared across nodes): a writer closed it without its extents; "
        "committing the staged file's data extents, which may cover bytes other nodes "
        "wrote",
        static_cast<unsigned long long>(v.vid), v.path.c_str());
    v.extents_unknown = true;
  }
}

// An extents or hints file whose version is gone or closed: nobody will read it.
static void discard_extents_file(const std::string& dir, uint64_t vid, const std::string& ext) {
  if (!ext.empty() && is_extents_file_name(ext, vid)) ::unlink((dir + "/" + ext).c_str());
}
static void discard_hints_file(const std::string& dir, uint64_t vid, const std::string& hints) {
  if (!hints.empty() && is_hints_file_name(hints, vid)) ::unlink((dir + "/" + hints).c_str());
}

Reply Service::close(ClientCtx& cl, uint64_t vid, uint64_t size, const std::string& ext,
                     const std::string& hints, int64_t blocked_ns, int64_t whole) {
  int64_t arrived = monotonic_ns();
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  Version* v = s.find(vid);
  // An fsync of it hashes it without the lock (hash_if_synced) and this CLOSE holds no
  // reference to it (re-sent after a reconnect): answered once the hash is settled.
  bool waited = false;
  while (v && v->hashing > 0 && !v->holders.count(cl.id) && !v->orphans.count(cl.pid)) {
    waited = true;
    s.done_cv.wait(lk);
    v = s.find(vid);
  }
  if (!v) {
    discard_extents_file(c_.session_dir, vid, ext);
    discard_hints_file(c_.session_dir, vid, hints);
    // Gone while this CLOSE waited: settled here (forgotten as unchanged since its fsync,
    // committed, or dropped with its path), not lost in a restart.
    if (waited) return reply_ok();
    // Not a version this forwarder holds: a restarted forwarder that did not find it in
    // staging, or one committed and forgotten before a crash swallowed the reply. Saying
    // OK could acknowledge bytes nobody keeps: the library falls back to the real path.
    LOG_WARN(
        "CLOSE of v%llu from pid %ld: no such version here (lost in a restart?); "
        "the client keeps the file itself",
        static_cast<unsigned long long>(vid), cl.pid);
    return reply_err(ESTALE);
  }
  if (v->state != VState::kOpen) {  // closed twice (re-sent after a reconnect): done
    discard_extents_file(c_.session_dir, vid, ext);
    discard_hints_file(c_.session_dir, vid, hints);
    return reply_ok();
  }
  // The rest of a CLOSE returns at once: what it waited for is the lock (and the hash).
  s.costs.blocked(vid, cl.pid, blocked_ns + (monotonic_ns() - arrived));
  // Every way on from here rewrites the .meta with what it took (or forgets the version).
  take_extents(*v, ext, whole);
  if (!hints.empty()) s.absorb_hints(*v, hints);
  if (auto h = v->holders.find(cl.id); h != v->holders.end()) {
    if (--h->second.refs == 0) v->holders.erase(h);
  } else if (auto o = v->orphans.find(cl.pid); o != v->orphans.end()) {
    if (--o->second == 0) v->orphans.erase(o);  // held across a lost connection
  } else if (!v->holders.empty() || !v->orphans.empty()) {
    LOG_DEBUG("CLOSE of v%llu from pid %ld, which holds no reference to it: ignored",
              static_cast<unsigned long long>(vid), cl.pid);
  }
  cl.closed.insert(vid);  // WAITALL: committed once its last writer closed it
  if (!v->holders.empty() || !v->orphans.empty()) {  // other writers still have it open
    s.rewrite_meta(*v);
    return reply_ok();
  }
  // Its last writer closed it: nobody writes the path through staging now.
  if (cl.release_after_reply)
    cl.unclaimed.push_back(v->path);
  else
    c_.fates.release_staged(v->path);
  if (v->dropped) {
    s.forget(vid);
    return reply_ok();
  }
  // A copy of another node's version (remote_verbs.cc): the bytes written here go to it.
  if (!v->owner_addr.empty()) {
    const uint64_t owner_vid = v->owner_vid;
    const std::string addr = v->owner_addr;
    int rc = hand_to_owner(lk, vid, true);
    if (rc >= 0) {
      if (rc == 0) handed_[vid] = {addr, owner_vid};
      if (s.find(vid)) s.forget(vid);
      return rc ? reply_err(rc) : reply_ok();
    }
    v = s.find(vid);
    if (!v) return reply_ok();
    if (v->dropped) {
      s.forget(vid);
      return reply_ok();
    }
  }
  v->closer_pid = cl.pid;
  s.mark_closed(*v);
  // Maybe unchanged since its last fsync: the whole-file hash that tells is the batcher's.
  if (settle_or_defer_unchanged(*v)) {
    await_noted(lk);
    return reply_ok();
  }
  if (size != v->size)
    LOG_DEBUG("v%llu: client says %llu bytes, staged file has %llu (the file wins)",
              static_cast<unsigned long long>(vid), static_cast<unsigned long long>(size),
              static_cast<unsigned long long>(v->size));
  c_.stats.files_captured++;
  c_.stats.bytes_captured += v->size;
  // Files shared across nodes through MPI-IO follow MPI's consistency (sync-barrier-sync,
  // and their collective close waits for the commit), not close-to-open.
  if (!v->partial && v->pending_store.empty()) note_pending(*v);  // (once: reopened in place)
  await_noted(lk);
  kill_point(c_.session_dir, "close-done");
  return reply_ok();
}

Reply Service::abandon(ClientCtx& cl, uint64_t vid) {
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  Version* v = s.find(vid);
  // It drops older versions of its path, which a record in flight may name: the turn of
  // the path's store first (waiting for it lets a RENAME move the path: look again).
  std::optional<ManifestTurn> turn;
  for (std::string store; v && store != store_for(c_.cfg, v->path); v = s.find(vid)) {
    turn.reset();
    store = store_for(c_.cfg, v->path);
    turn.emplace(s, lk, std::vector<std::string>{store});
  }
  if (!v) {
    c_.stats.fallbacks++;
    return reply_ok();
  }
  // One fate per path: with other writers still staging it, this one may not write the
  // real file alone (each copy would lack the other's bytes).
  bool others = v->orphans.size() > (v->orphans.count(cl.pid) ? 1u : 0u);
  for (const auto& [id, hold] : v->holders)
    if (id != cl.id) others = true;
  if (others) {
    LOG_WARN(
        "ABANDON of v%llu (%s) by pid %ld refused: other processes write it through "
        "staging",
        static_cast<unsigned long long>(vid), v->path.c_str(), cl.pid);
    return reply_err(EBUSY);
  }
  c_.stats.fallbacks++;
  std::string path = v->path;
  c_.fates.make_direct(path);
  uint64_t order = v->order;
  LOG_INFO("v%llu of %s abandoned by pid %ld: the client writes the real file now",
           static_cast<unsigned long long>(vid), path.c_str(), cl.pid);
  // The client switched its fd to the real path and will not CLOSE this version.
  s.forget(vid);
  cl.closed.erase(vid);
  // Older versions would hide the real file from readers: forget them too.
  std::vector<uint64_t> older;
  for (Version* p : s.pending_of(path))
    if (p->order < order) older.push_back(p->vid);
  for (uint64_t o : older)
    if (Version* p = s.find(o)) s.drop(*p);
  std::string store = store_for(c_.cfg, path);
  if (s.catalogs.find(store, path)) {
    std::string err;
    auto record = [&](std::string* e) { return manifest::append_unlink(store, path, e); };
    if (append_unlocked(lk, record, &err)) {
      if (!s.catalogs.replay_appended(store)) s.catalogs.get(store).apply_unlink(path);
    } else {
      c_.stats.errors++;
      LOG_ERROR(
          "cannot record in store %s that %s is now the real file: %s. Readers may see "
          "its older committed version. Fix: make the store writable",
          store.c_str(), path.c_str(), err.c_str());
    }
  }
  return reply_ok();
}

void Service::disconnect(ClientCtx& cl) {
  drop_leases(cl);
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  // A process that lives on lost its connection (its forwarder restarts, or it closed the
  // library's socket): what it holds stays open for it, and its exit wait on the next
  // connection still waits for what it closed on this one.
  bool alive = !cl.peer && process_alive(cl.pid);  // a peer node's writers left with it
  if (alive && !cl.closed.empty())
    s.closed_by_pid[cl.pid].insert(cl.closed.begin(), cl.closed.end());
  std::vector<uint64_t> open;
  for (auto& [vid, v] : s.versions) {
    if (v.state != VState::kOpen) continue;
    auto h = v.holders.find(cl.id);
    if (h == v.holders.end()) continue;
    int refs = h->second.refs;
    v.holders.erase(h);
    if (alive) {
      v.orphans[cl.pid] += refs;
      continue;
    }
    if (v.created && !v.extents_unknown) {
      v.extents_unknown = true;  // its extents died with it
      s.rewrite_meta(v);
    } else if (v.partial && !v.extents_unknown) {  // its extents died with it
      LOG_WARN(
          "pid %ld went away with %s (shared across nodes) open: its extents are "
          "unknown; committing the staged file's data extents",
          cl.pid, v.path.c_str());
      v.extents_unknown = true;
      s.rewrite_meta(v);
    }
    if (v.holders.empty() && v.orphans.empty()) open.push_back(vid);  // it was the last writer
  }
  for (uint64_t vid : open) close_unheld(vid, cl.pid);
  s.clients--;
  s.work_cv.notify_all();
}

void Service::after_reply(ClientCtx& cl) {
  make_lease(cl);
  if (cl.unclaimed.empty()) return;
  if (test_hooks().before_release_after_reply) test_hooks().before_release_after_reply();
  State& s = c_.state;
  std::lock_guard lk(s.mu);
  // A version of the path opened for writing since holds the claim now. One still being
  // prepared may be a new writer's (its claim made) or a staging of a rename's source
  // (none): looked at again after the next reply.
  std::vector<std::string> later;
  for (std::string& path : cl.unclaimed) {
    bool preparing = false;
    if (s.open_for_write(path, &preparing)) continue;
    if (preparing)
      later.push_back(std::move(path));
    else
      c_.fates.release_staged(path);
  }
  cl.unclaimed = std::move(later);
}

void Service::await_noted(std::unique_lock<std::mutex>& lk) {
  const auto until = c_.state.pending.counts_from();
  if (Clock::now() >= until) return;
  lk.unlock();
  std::this_thread::sleep_until(until);
  lk.lock();
}

void Service::note_pending(Version& v) {
  // The group answers for a path this node owns in it (group.h): nothing to note.
  if (group_ && group_->owns(v.path)) return;
  std::string store = store_for(c_.cfg, v.path), err;
  if (c_.state.pending.closed(store, v.vid, v.path, &err)) {
    v.pending_store = store;
  } else {
    LOG_WARN(
        "cannot note %s as closed and not yet committed (%s): an open of it on another "
        "node may see its older bytes until the commit",
        v.path.c_str(), err.c_str());
  }
}

void Service::await_own_records(std::unique_lock<std::mutex>& lk, const std::string& store) {
  State& s = c_.state;
  s.manifest_cv.wait(lk, [&] { return !s.manifest_busy.count(store); });
}

void Service::await_other_nodes(std::unique_lock<std::mutex>& lk, const std::string& path) {
  State& s = c_.state;
  std::string store = store_for(c_.cfg, path);
  if (!s.pending.pending_elsewhere(store, path)) return;
  LOG_INFO("%s was closed on another node and is not on the store yet: waiting for its commit",
           path.c_str());
  auto deadline = Clock::now() + PendingJournal::kWaitLimit;
  do {
    if (Clock::now() >= deadline) {
      LOG_WARN(
          "%s: another node closed it %lld s ago and has not committed it (its forwarder "
          "died?); going on with what the store holds",
          path.c_str(), static_cast<long long>(PendingJournal::kWaitLimit.count()));
      return;
    }
    lk.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    lk.lock();
  } while (!s.newest(path) && s.pending.pending_elsewhere(store, path));
}

void Service::close_unheld(uint64_t vid, long pid) {
  State& s = c_.state;
  Version* v = s.find(vid);
  if (!v || v->state != VState::kOpen || !v->holders.empty() || !v->orphans.empty()) return;
  c_.fates.release_staged(v->path);
  if (v->dropped) {
    s.forget(vid);
    return;
  }
  s.mark_closed(*v);
  if (settle_or_defer_unchanged(*v)) return;
  c_.stats.files_captured++;
  c_.stats.bytes_captured += v->size;
  LOG_INFO("pid %ld went away with %s open: its %llu bytes are kept as written", pid,
           v->path.c_str(), static_cast<unsigned long long>(v->size));
}

}  // namespace ckptfwd::fwd
