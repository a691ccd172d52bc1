// OPEN: a write open starts a new staged version holding the path's current bytes; a
// read-only open is served from the newest staged version or a restored read view.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "base/monotonic.h"
#include "forwarder/restore/restore.h"
#include "forwarder/staging/extents.h"
#include "forwarder/staging/staging.h"
#include "forwarder/state/fate_file.h"
#include "forwarder/util/kill_point.h"
#include "forwarder/util/log.h"
#include "forwarder/util/store_paths.h"
#include "forwarder/util/test_hooks.h"
#include "forwarder/verbs/service.h"
#include "store/manifest/manifest_end.h"
#include "store/manifest/newer_real_file.h"

namespace ckptfwd::fwd {

Reply Service::open(ClientCtx& cl, const std::string& path, int flags, unsigned mode, bool shared) {
  if ((flags & O_ACCMODE) == O_RDONLY) return open_read(path, cl.peer, cl.read_gen);
  // A process of this node is about to write: bulk compression waits (yield_gate.h).
  if (!cl.peer) c_.gate.note_write(monotonic_ns());
  return open_write(cl, path, flags, mode, shared);
}

Reply Service::open_read(const std::string& path, bool from_peer, uint64_t gen) {
  State& s = c_.state;
  // Read links (wire/read_link.h): gen was read before any check below (and before
  // this request waited for other sessions' leased OPENs); the store is watched before
  // its catalog is looked at.
  if (!from_peer) c_.stats.read_opens++;
  std::string store = store_for(c_.cfg, path);
  if (!from_peer) c_.links.watch(store);
  std::unique_lock lk(s.mu);
  // Written directly in this job (wire/fate.h): the real file is the truth.
  if (c_.fates.is_direct(path)) return reply_pass();
  // Another node owns it (remote_verbs.cc): its newest bytes are there, once what this
  // node's writers wrote is handed over. A copy still written here reads as written here.
  if (group_ && !from_peer) {
    Version* n = await_hand_over(lk, path);
    if (!n) {
      lk.unlock();
      if (std::optional<Reply> r = read_at_owner(path)) return *r;
      lk.lock();
    }
  }
  if (!s.newest(path)) await_other_nodes(lk, path);
  await_own_records(lk, store);
  char mode[16];  // the file's mode: the library shows it in fstat of the view's fd
  if (Version* v = s.newest(path)) {
    snprintf(mode, sizeof(mode), "%o", v->mode);
    return reply_ok({"0", v->data_path, "-1", "-", mode});
  }
  const CatalogEntry* found = store_version(store, path);
  if (lost_on_store(store, path)) return reply_err(EIO);
  if (!found) return reply_pass();
  CatalogEntry e = *found;
  const std::string view_name = read_view_of(c_.session_dir, store, e);
  s.serve_view(view_name, true);  // not purged under the restore
  lk.unlock();                    // a restore may take a while; never under the lock
  // Staged already (prefetched, or opened before): nothing but this check. Else the other
  // files of its container are staged in the background while this one is restored.
  bool restored = false;
  std::string err, view = view_name;
  if (!read_view_ready(view_name, e.size)) {
    c_.prefetch.prefetch_container(store, e);
    view = c_.prefetch.restore_opened(store, e, view_name, gen, &restored, &err);
  }
  lk.lock();
  s.serve_view(view_name, false);
  // The checks above ran after gen was read: whatever changed since raised it (and no
  // version of the path, not even one still being made, nor a MANIFEST turn under way).
  if (!view.empty() && !from_peer && !s.has_version(path) && !s.manifest_busy.count(store))
    c_.links.publish(view, path, e.mode & 07777, gen, restored);
  lk.unlock();
  if (view.empty()) {
    LOG_ERROR("cannot restore %s from %s/%s: %s. Fix: run `ckptfwd verify %s`", path.c_str(),
              store.c_str(), e.container.c_str(), err.c_str(), store.c_str());
    c_.stats.errors++;
    return reply_err(EIO);
  }
  if (restored) {
    c_.stats.restores++;
    c_.stats.bytes_restored += e.size;
  }
  snprintf(mode, sizeof(mode), "%o", e.mode);
  return reply_ok({"0", view, "-1", "-", mode});
}

Reply Service::open_write(ClientCtx& cl, const std::string& path, int flags, unsigned req_mode,
                          bool shared) {
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  // Another node owns it (remote_verbs.cc): a copy of the owner's bytes, handed back at
  // the close. A file shared through MPI-IO stays with MPI's rules (an overlay per node).
  if (group_ && !shared && !cl.peer) {
    Version* n = s.newest(path);
    if (!n || !n->owner_addr.empty())
      if (std::optional<Reply> r = open_at_owner(lk, cl, path, flags, req_mode)) return *r;
  }
  if (Version* joined = await_joinable(lk, path, shared))
    return join_write(cl, *joined, flags, shared);
  if (Version* joined = await_leased_open(lk, path)) return join_write(cl, *joined, flags, shared);
  if (!shared && !(flags & O_TRUNC))
    if (Version* closed = reopenable(cl, path)) return reopen_in_place(cl, *closed, flags);
  WriteSource src;
  src.store = store_for(c_.cfg, path);
  if (std::optional<Reply> r = find_write_source(path, src)) return *r;
  if (std::optional<Reply> r = refuse_write_open(path, flags, shared, src)) return *r;
  const bool exists = src.kind != WriteSource::Kind::kNone;
  const bool copy = exists && !(flags & O_TRUNC);
  // Opened under the lock: the fd keeps a staged source alive even if it commits meanwhile.
  int src_fd = -1;
  if (copy && src.kind != WriteSource::Kind::kCatalog) {
    src_fd = ::open(src.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (src_fd < 0) return reply_err(errno);
  }
  if (written_directly(path, cl.pid)) {
    if (src_fd >= 0) ::close(src_fd);
    return reply_pass();
  }
  Version& v = add_write_version(cl, path, req_mode, shared, copy, src);
  uint64_t vid = v.vid;
  bool v_extents = v.partial || v.created;
  std::string data = v.data_path;
  std::string err;
  int fd = create_staged(v.data_path, &err);
  // With starting bytes to copy, the .meta comes after the copy: a crash meanwhile leaves
  // a staged file without one, which a recovery deletes (never a truncated version).
  if (fd < 0 || (!copy && !write_meta(v.meta_path, meta_of(v), &err, MetaWrite::kFresh)))
    return staging_failed(path, vid, exists, errno ? errno : EIO, fd, src_fd, err);
  if (copy) {
    if (std::optional<Reply> r = copy_starting_bytes(lk, path, v, src, fd, src_fd)) return *r;
  }
  ::close(fd);
  if (src_fd >= 0) ::close(src_fd);
  long long budget = stage_budget();
  LOG_DEBUG("open %s for writing: v%llu (%s)", path.c_str(), static_cast<unsigned long long>(vid),
            copy ? "from its current bytes" : "empty");
  // "x": record the bytes you write (an overlay's extents); protocol.h.
  return reply_ok({std::to_string(vid), data, std::to_string(budget), v_extents ? "x" : "-"});
}

Version* Service::await_leased_open(std::unique_lock<std::mutex>& lk, const std::string& path) {
  if (!c_.fates.unheld_own_claim(path)) return nullptr;
  // Claimed by a client's leased open between its claim and its OPEN (wire/lease.h): that
  // OPEN comes within microseconds, and this opener joins its version, as openers of one
  // path do. A claim whose OPEN never comes (its client died) is taken over after a while.
  State& s = c_.state;
  for (int i = 0; i < kLeasedOpenWaits; ++i) {
    lk.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    lk.lock();
    bool preparing = false;
    if (Version* v = s.open_for_write(path, &preparing)) return v;
  }
  return nullptr;
}

Version* Service::await_joinable(std::unique_lock<std::mutex>& lk, const std::string& path,
                                 bool shared) {
  State& s = c_.state;
  // Closed on another node and not on the store yet: wait for it first (close-to-open;
  // MPI-IO files follow MPI's rules instead). The wait releases the lock, so whatever
  // another opener of path did meanwhile is looked at below, never missed: two openers
  // woken together must share one version, not stage two.
  bool preparing = false;
  if (!shared && !s.newest(path) && !s.open_for_write(path, &preparing) && !preparing)
    await_other_nodes(lk, path);
  // A version of path still open for writing: join it (same vid, same staged file).
  Version* joined = nullptr;
  for (preparing = true; preparing;) {
    joined = s.open_for_write(path, &preparing);
    if (joined || !preparing) break;
    s.done_cv.wait(lk);  // its first opener is copying the starting bytes in
  }
  return joined;
}

std::optional<Reply> Service::find_write_source(const std::string& path, WriteSource& src) {
  if (Version* v = c_.state.newest(path)) {
    src.kind = WriteSource::Kind::kStaged;
    src.path = v->data_path;
    src.mode = v->mode;
    src.created = v->created;
    if (v->partial || v->created) {
      src.partial = v->partial;
      src.extents_unknown = v->extents_unknown;
      src.extents = v->extents;
      src.on_store = v->based_on_store;
    }
  } else if (const CatalogEntry* e = store_version(src.store, path)) {
    src.kind = WriteSource::Kind::kCatalog;
    src.cat = *e;
    src.mode = e->mode;
  } else if (!src.seen_new) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) return reply_err(EISDIR);
      if (!S_ISREG(st.st_mode)) return reply_pass();  // a device or fifo is not ours
      src.kind = WriteSource::Kind::kReal;
      src.path = path;
      src.mode = st.st_mode & 07777;
    }
  }
  return std::nullopt;
}

std::optional<Reply> Service::refuse_write_open(const std::string& path, int flags, bool shared,
                                                const WriteSource& src) {
  // A record cut off the MANIFEST's end may hold a newer version than the catalog's or the
  // real file: a version starting from their bytes would lose it (store/manifest/manifest_end.h).
  if (src.kind != WriteSource::Kind::kStaged && !(flags & O_TRUNC) &&
      lost_on_store(src.store, path))
    return reply_err(EIO);
  bool exists = src.kind != WriteSource::Kind::kNone;
  // A shared open of a path unknown here: a rank on another node created it.
  if (!exists && !(flags & O_CREAT) && !shared) return reply_err(ENOENT);
  if (exists && (flags & O_CREAT) && (flags & O_EXCL)) return reply_err(EEXIST);
  if (!exists && !src.seen_new) {
    // Same answer a direct open would give for a missing parent directory.
    struct stat ds;
    if (::stat(dirname_of(path).c_str(), &ds) != 0) return reply_err(ENOENT);
    if (!S_ISDIR(ds.st_mode)) return reply_err(ENOTDIR);
  }
  return std::nullopt;
}

Version& Service::add_write_version(ClientCtx& cl, const std::string& path, unsigned req_mode,
                                    bool shared, bool copy, WriteSource& src, uint64_t vid) {
  using Kind = WriteSource::Kind;
  const bool exists = src.kind != Kind::kNone;
  Version& v =
      c_.state.add(path, cl.rank, cl.pid, cl.id, exists ? src.mode : (req_mode & 07777), vid);
  v.holders[cl.id] = {cl.pid, 1};
  v.created = (src.kind == Kind::kNone || src.created) && !shared;
  v.partial = shared || (copy && src.partial);
  v.started_from_existing = copy;
  v.based_on_store =
      v.partial && (src.kind == Kind::kCatalog || (src.kind == Kind::kStaged && src.on_store));
  if (copy && (src.partial || v.created)) {  // (a created source only makes v created)
    v.extents = std::move(src.extents);
    v.extents_unknown = src.extents_unknown;
  }
  return v;
}

Reply Service::staging_failed(const std::string& path, uint64_t vid, bool exists, int e, int fd,
                              int src_fd, const std::string& err) {
  if (fd >= 0) ::close(fd);
  if (src_fd >= 0) ::close(src_fd);
  c_.state.forget(vid);
  LOG_WARN("cannot stage %s in %s: %s. Fix: free space there or set CKPTFWD_STAGE_DIR",
           path.c_str(), c_.session_dir.c_str(), err.c_str());
  // Nothing to lose for a new file: let the library write it directly (counted), and
  // every later opener with it.
  if (!exists) {
    c_.stats.fallbacks++;
    c_.fates.make_direct(path);
    return reply_pass();
  }
  c_.fates.release_staged(path);
  return reply_err(e);
}

std::optional<Reply> Service::copy_starting_bytes(std::unique_lock<std::mutex>& lk,
                                                  const std::string& path, Version& v,
                                                  const WriteSource& src, int fd, int src_fd) {
  State& s = c_.state;
  const bool from_catalog = src.kind == WriteSource::Kind::kCatalog;
  const uint64_t vid = v.vid;
  v.ready = false;  // hidden from readers until its starting bytes are in
  lk.unlock();
  kill_point(c_.session_dir, "open-copy");
  if (test_hooks().during_starting_copy) test_hooks().during_starting_copy(path);
  std::string err;
  bool ok = from_catalog ? restore_entry(src.store, src.cat, fd, &err) : copy_fd(src_fd, fd, &err);
  lk.lock();
  if (!ok) {
    ::close(fd);
    if (src_fd >= 0) ::close(src_fd);
    s.forget(vid);
    c_.fates.release_staged(path);
    LOG_ERROR("cannot copy the current bytes of %s into staging: %s", path.c_str(), err.c_str());
    c_.stats.errors++;
    return reply_err(EIO);
  }
  if (Version* nv = s.find(vid)) {
    nv->ready = true;
    struct stat st;
    if (::fstat(fd, &st) == 0) nv->start_size = static_cast<uint64_t>(st.st_size);
    if (!nv->extents.empty()) s.persist_extents(*nv);  // inherited: a recovery needs them
    if (!write_meta(nv->meta_path, meta_of(*nv), &err, MetaWrite::kFresh)) {
      ::close(fd);
      if (src_fd >= 0) ::close(src_fd);
      s.forget(vid);
      c_.fates.release_staged(path);
      s.done_cv.notify_all();
      LOG_ERROR("cannot describe the staged copy of %s: %s. Fix: free space in %s", path.c_str(),
                err.c_str(), c_.session_dir.c_str());
      c_.stats.errors++;
      return reply_err(EIO);
    }
  }
  s.done_cv.notify_all();  // openers waiting to join it
  if (from_catalog) {
    c_.stats.restores++;
    c_.stats.bytes_restored += src.cat.size;
  }
  return std::nullopt;
}

bool Service::lost_on_store(const std::string& store, const std::string& path) {
  const std::string* container = c_.state.catalogs.lost_version(store, path);
  if (!container) return false;
  LOG_ERROR("cannot give back %s", lost_path_message(path, *container).c_str());
  c_.stats.errors++;
  return true;
}

const CatalogEntry* Service::store_version(const std::string& store, const std::string& path) {
  const CatalogEntry* e = c_.state.catalogs.find(store, path);
  int64_t file_ns = 0;
  if (!e || !real_file_is_newer(path, e->mtime_ns, &file_ns)) return e;
  // Told once per path and file time, so that a rewrite after it is told again.
  static std::set<std::pair<std::string, int64_t>> told;
  if (told.emplace(path, file_ns).second)
    LOG_WARN(
        "%s was written directly (mtime %lld.%09lld) after its version in %s (mtime "
        "%lld.%09lld): the file is served, not the store's older bytes",
        path.c_str(), static_cast<long long>(file_ns / 1000000000),
        static_cast<long long>(file_ns % 1000000000), store.c_str(),
        static_cast<long long>(e->mtime_ns / 1000000000),
        static_cast<long long>(e->mtime_ns % 1000000000));
  return nullptr;
}

long long Service::stage_budget() {
  if (!c_.cfg.stage_limit) return -1;
  uint64_t used = c_.state.staged_bytes();
  return used >= c_.cfg.stage_limit ? 0 : static_cast<long long>(c_.cfg.stage_limit - used);
}

Reply Service::join_write(ClientCtx& cl, Version& v, int flags, bool shared) {
  if ((flags & O_CREAT) && (flags & O_EXCL)) return reply_err(EEXIST);
  // Writers that joined earlier without "shared" hand over no extents: their CLOSE marks
  // the extents unknown (lifecycle_verbs.cc).
  if (shared) c_.state.mark_partial(v);
  if ((flags & O_TRUNC) && ::truncate(v.data_path.c_str(), 0) != 0) {
    int e = errno;
    LOG_ERROR("cannot truncate staged %s for a new opener of %s: %s", v.data_path.c_str(),
              v.path.c_str(), strerror(e));
    return reply_err(e);
  }
  v.joins++;  // a hash of it taken before now no longer tells whether it is unchanged
  Version::Hold& h = v.holders[cl.id];
  h.pid = cl.pid;
  if (h.refs++ == 0) c_.state.rewrite_meta(v);  // a new holder: a recovery must know it
  LOG_DEBUG("open %s for writing: joins v%llu (%zu connections)", v.path.c_str(),
            static_cast<unsigned long long>(v.vid), v.holders.size());
  return reply_ok({std::to_string(v.vid), v.data_path, std::to_string(stage_budget()),
                   v.partial || v.created ? "x" : "-"});
}

bool Service::written_directly(const std::string& path, long pid) {
  // One fate per path (wire/fate.h): a path some process writes directly is written
  // directly by every process, this one too.
  if (c_.fates.claim_staged(path) != fate::Fate::kDirect) return false;
  LOG_INFO("OPEN of %s by pid %ld: the path is written directly in this job: PASS", path.c_str(),
           pid);
  return true;
}

Version* Service::reopenable(const ClientCtx& cl, const std::string& path) {
  Version* v = c_.state.newest(path);
  if (!v || cl.peer || v->state != VState::kClosed || v->dropped || !v->ready) return nullptr;
  // Closed by this process and only ever held by it: nobody else's exit waits for it.
  if (v->closer_pid != cl.pid || v->joins != 0 || v->client != cl.id) return nullptr;
  // Nothing fsynced (its snapshots and their bookkeeping stay as they are), not shared
  // across nodes, not a copy of another node's version, not failing.
  if (v->partial || !v->owner_addr.empty() || v->snapshot_of || v->last_snapshot ||
      v->synced.valid || v->check_unchanged || v->sync_waiters || v->live_source || v->failures)
    return nullptr;
  // Nobody else waits for it: no other node's open (the close-to-open journal names it),
  // no wait in progress (a drain, another thread's WAITALL), which would then last until
  // the next close instead of the commit.
  if (!v->pending_store.empty() || c_.state.waiters > 0 || c_.state.draining) return nullptr;
  return v;
}

Reply Service::reopen_in_place(ClientCtx& cl, Version& v, int flags) {
  if ((flags & O_CREAT) && (flags & O_EXCL)) return reply_err(EEXIST);
  if (written_directly(v.path, cl.pid)) return reply_pass();
  c_.state.reopen(v);
  v.holders[cl.id] = {cl.pid, 1};
  c_.state.rewrite_meta(v);  // open again, with its holder: a recovery must know
  c_.stats.reopens_in_place++;
  LOG_DEBUG("open %s for writing: reopens v%llu in place", v.path.c_str(),
            static_cast<unsigned long long>(v.vid));
  return reply_ok(
      {std::to_string(v.vid), v.data_path, std::to_string(stage_budget()), v.created ? "x" : "-"});
}

}  // namespace ckptfwd::fwd
