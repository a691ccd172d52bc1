// STAT, RENAME, UNLINK, LIST: the name space of captured files, which is the union of the
// staged versions and the store's catalog (staged versions are newer and win).
//
// RENAME and UNLINK answer PASS when a real file also exists at the (old) path, so the
// library applies the same operation to it: otherwise a stale real file (the one a
// version was first copied from) would reappear once our name moved away.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <set>

#include "forwarder/commit/gc.h"
#include "forwarder/commit/manifest_turn.h"
#include "forwarder/restore/restore.h"
#include "forwarder/staging/staging.h"
#include "forwarder/state/fate_file.h"
#include "forwarder/util/log.h"
#include "forwarder/util/store_paths.h"
#include "forwarder/util/test_hooks.h"
#include "forwarder/verbs/service.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd {

namespace {
bool real_exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}
}  // namespace

Reply Service::done_or_pass(const std::string& path) {
  return real_exists(path) ? reply_pass() : reply_ok();
}

Reply Service::stat(const std::string& path, bool from_peer) {
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  // Another node owns it (remote_verbs.cc): its newest version is there.
  if (group_ && !from_peer && !await_hand_over(lk, path)) {
    lk.unlock();
    if (std::optional<Reply> r = stat_at_owner(path)) return *r;
    lk.lock();
  }
  if (!s.newest(path)) await_other_nodes(lk, path);
  const std::string store = store_for(c_.cfg, path);
  await_own_records(lk, store);
  char mode[16];
  if (Version* v = s.newest(path)) {
    struct stat st;
    if (::stat(v->data_path.c_str(), &st) == 0) {
      snprintf(mode, sizeof(mode), "%o", v->mode);
      return reply_ok({std::to_string(st.st_size), mode, std::to_string(st.st_mtim.tv_sec),
                       std::to_string(st.st_mtim.tv_nsec)});
    }
  }
  const CatalogEntry* e = store_version(store, path);
  if (lost_on_store(store, path)) return reply_err(EIO);  // not ENOENT, nor an older size
  if (e) {
    snprintf(mode, sizeof(mode), "%o", e->mode);
    return reply_ok({std::to_string(e->size), mode, std::to_string(e->mtime_ns / 1000000000),
                     std::to_string(e->mtime_ns % 1000000000)});
  }
  return reply_pass();
}

bool Service::append_unlocked(std::unique_lock<std::mutex>& lk,
                              const std::function<bool(std::string*)>& append, std::string* err) {
  lk.unlock();
  if (test_hooks().before_manifest_append) test_hooks().before_manifest_append();
  const bool ok = append(err);
  lk.lock();
  return ok;
}

bool Service::stage_from_catalog(std::unique_lock<std::mutex>& lk, const std::string& store,
                                 const CatalogEntry& e, const std::string& path) {
  State& s = c_.state;
  Version& v = s.add(path, -1, 0, 0, e.mode);
  v.ready = false;
  uint64_t vid = v.vid;
  std::string err;
  int fd = create_staged(v.data_path, &err);
  bool ok = fd >= 0 && write_meta(v.meta_path, VersionMeta{path, -1, e.mode, 0}, &err);
  if (ok) {
    lk.unlock();
    ok = restore_entry(store, e, fd, &err);
    lk.lock();
  }
  if (fd >= 0) ::close(fd);
  Version* nv = s.find(vid);
  if (!ok || !nv) {
    LOG_ERROR("cannot move %s to %s across stores: %s", e.path.c_str(), path.c_str(), err.c_str());
    s.forget(vid);
    return false;
  }
  nv->ready = true;
  s.mark_closed(*nv);
  return true;
}

Reply Service::rename(const std::string& from, const std::string& to, bool from_peer, bool* acted) {
  if (group_ && from != to) {
    // A path another node owns is renamed by its owner (remote_names.cc).
    if (!from_peer)
      if (std::optional<Reply> r = done_at_owner(from, "renaming it", {"RENAME", from, to}))
        return *r;
    // A staged version renamed to `to` is this node's to commit: the group answers for it
    // here (other nodes' opens of `to` ask here), and its old owner drops its versions.
    // Only when the rename acts here: one of a name this node has nothing of replaces
    // nothing of another node's (the real file's rename may fail).
    bool acts;
    {
      std::lock_guard lk(c_.state.mu);
      acts = !c_.state.pending_of(from).empty() ||
             c_.state.catalogs.find(store_for(c_.cfg, from), from) != nullptr;
    }
    if (acts) take_name(to);
  }
  std::unique_lock lk(c_.state.mu);
  bool did = false;
  Reply r = rename_in_turn(lk, from, to, &did);
  await_noted(lk);  // (after the turn: commits to these stores go on meanwhile)
  if (acted) *acted = did;
  return r;
}

Reply Service::rename_in_turn(std::unique_lock<std::mutex>& lk, const std::string& from,
                              const std::string& to, bool* acted) {
  State& s = c_.state;
  std::string store_from = store_for(c_.cfg, from), store_to = store_for(c_.cfg, to);
  ManifestTurn turn(s, lk, {store_from, store_to});  // records in flight name these paths
  bool has_pending = !s.pending_of(from).empty();
  const CatalogEntry* found = s.catalogs.find(store_from, from);
  if (!has_pending && !found) return reply_pass();
  *acted = true;
  if (from == to) return reply_ok();
  std::optional<CatalogEntry> entry;
  if (found) entry = *found;
  std::string err;
  // The records go in without the state lock (append_unlocked); the turn keeps the
  // catalog as found. The staged versions of both paths are looked up after them: one
  // opened meanwhile came before the rename, and moves or is replaced with the others.
  if (entry && store_from == store_to) {
    auto record = [&](std::string* e) { return manifest::append_rename(store_from, from, to, e); };
    if (!append_unlocked(lk, record, &err)) {
      LOG_ERROR("cannot record rename %s -> %s in store %s: %s. Fix: make the store writable",
                from.c_str(), to.c_str(), store_from.c_str(), err.c_str());
      c_.stats.errors++;
      return reply_err(EIO);
    }
    if (!s.catalogs.replay_appended(store_from)) s.catalogs.get(store_from).apply_rename(from, to);
    gc_due(c_.commit_context(), store_from);  // what `to` held is one version older now
  }
  // Whatever `to` held before is superseded (closed versions deleted; open ones keep
  // being written by their clients but are never committed).
  s.drop_all(to);
  if (entry && store_from != store_to) {
    // Another store: its catalog cannot point into ours, so the bytes move as a new version
    // of `to` (unless a staged version of `from` is newer anyway), then `from` goes away.
    if (!has_pending && !stage_from_catalog(lk, store_from, *entry, to)) {
      c_.stats.errors++;
      return reply_err(EIO);
    }
    auto record = [&](std::string* e) { return manifest::append_unlink(store_from, from, e); };
    if (!append_unlocked(lk, record, &err)) {
      LOG_ERROR("cannot record unlink of %s in store %s: %s. Fix: make the store writable",
                from.c_str(), store_from.c_str(), err.c_str());
      c_.stats.errors++;
      return reply_err(EIO);
    }
    if (!s.catalogs.replay_appended(store_from)) s.catalogs.get(store_from).apply_unlink(from);
  }
  bool moved_open = false;
  for (Version* p : s.pending_of(from)) {
    moved_open = moved_open || p->state == VState::kOpen;
    // Its committed fsync snapshot moved with the catalog entry (same store): still the
    // bytes a close unchanged since then leaves standing (settle_or_defer_unchanged).
    if (entry && store_from == store_to && p->synced.valid && p->synced.path == from)
      p->synced.path = to;
    s.set_path(*p, to);
    // A rename replaces whatever `to` was: a new file renamed is a whole file now, never
    // stacked on what it replaced (Version::created). Its extents stay valid ranges.
    p->created = false;
    // Other nodes must wait for the new name now (closed versions: an open one is noted
    // at its close). A version of a path the group answered for may need a note now.
    const bool noted = !p->pending_store.empty();
    if (noted) {
      s.pending.settled(p->pending_store, p->vid);
      p->pending_store.clear();
    }
    if (noted || (group_ && p->state != VState::kOpen && !p->partial)) note_pending(*p);
    s.rewrite_meta(*p);
  }
  // A version still open for writing is written under its new name: its fate claim moves
  // with it, so that an open of that name finds it taken (a leased open's claim fails
  // there, wire/lease.h, and its OPEN joins the version instead).
  if (moved_open) {
    c_.fates.release_staged(from);
    c_.fates.claim_staged(to);
  }
  LOG_DEBUG("rename %s -> %s", from.c_str(), to.c_str());
  return done_or_pass(from);
}

Reply Service::unlink(const std::string& path, bool from_peer) {
  // A path another node owns is unlinked by its owner (remote_names.cc).
  if (group_ && !from_peer)
    if (std::optional<Reply> r = done_at_owner(path, "unlinking it", {"UNLINK", path})) {
      if (!r->empty() && (*r)[0] != wire::kErr) drop_own_versions(path);
      return *r;
    }
  bool acted = false;
  return unlink_here(path, &acted);
}

Reply Service::unlink_here(const std::string& path, bool* acted) {
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  std::string store = store_for(c_.cfg, path);
  ManifestTurn turn(s, lk, {store});  // a record in flight may name the path
  bool in_catalog = s.catalogs.find(store, path) != nullptr;
  if (s.pending_of(path).empty() && !in_catalog) return reply_pass();
  *acted = true;
  if (in_catalog) {
    std::string err;
    auto record = [&](std::string* e) { return manifest::append_unlink(store, path, e); };
    if (!append_unlocked(lk, record, &err)) {
      LOG_ERROR("cannot record unlink of %s in store %s: %s. Fix: make the store writable",
                path.c_str(), store.c_str(), err.c_str());
      c_.stats.errors++;
      return reply_err(EIO);
    }
    if (!s.catalogs.replay_appended(store)) s.catalogs.get(store).apply_unlink(path);
    gc_due(c_.commit_context(), store);
  }
  // Looked up after the record: a version opened while it went in came before the unlink.
  s.drop_all(path);
  return done_or_pass(path);
}

Reply Service::list(const std::string& dir) {
  State& s = c_.state;
  std::set<std::string> names;
  // Other nodes' files not on the store yet (remote_names.cc).
  if (group_) names_at_owners(dir, names);
  std::lock_guard lk(s.mu);
  for (auto& [vid, v] : s.versions)
    if (!v.dropped && dirname_of(v.path) == dir) names.insert(basename_of(v.path));
  std::string prefix = (dir == "/" ? "" : dir) + "/";
  // One store may hold many directories (store_paths.h): only the paths below dir, which
  // sort together.
  const auto& entries = s.catalogs.get(store_for(c_.cfg, prefix + "x")).entries();
  for (auto it = entries.lower_bound(prefix);
       it != entries.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
    if (it->first.find('/', prefix.size()) == std::string::npos)
      names.insert(it->first.substr(prefix.size()));
  Reply r = reply_ok();
  size_t bytes = 16;
  for (const std::string& n : names) {
    bytes += n.size() + 1;
    if (bytes > wire::kMaxReplyFrame) {
      LOG_WARN("LIST %s: too many names for one reply; the listing is cut short", dir.c_str());
      break;
    }
    r.push_back(n);
  }
  return r;
}

Reply Service::chmod(const std::string& path, uint32_t mode) {
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  // A record in flight carries the mode of the version it commits.
  ManifestTurn turn(s, lk, {store_for(c_.cfg, path)});
  if (Version* v = s.newest(path)) {
    // The newest version is what commits and what readers see; older staged ones are
    // superseded in the catalog by it anyway.
    v->mode = mode & 07777;  // the staged file itself stays 0600
    s.rewrite_meta(*v);
    return reply_ok();
  }
  std::string store = store_for(c_.cfg, path);
  if (!store_version(store, path)) return reply_pass();  // none, or the file is newer
  std::string err;
  auto record = [&](std::string* e) { return manifest::append_chmod(store, path, mode, e); };
  if (!append_unlocked(lk, record, &err)) {
    LOG_ERROR("cannot record chmod of %s in store %s: %s. Fix: make the store writable",
              path.c_str(), store.c_str(), err.c_str());
    c_.stats.errors++;
    return reply_err(EIO);
  }
  if (!s.catalogs.replay_appended(store)) s.catalogs.get(store).apply_chmod(path, mode);
  // A version opened while the record went in copied the committed file with its old
  // mode: it came before the chmod, and commits the new one.
  if (Version* v = s.newest(path)) {
    v->mode = mode & 07777;
    s.rewrite_meta(*v);
  }
  return reply_ok();
}

Reply Service::stats(bool vars) {
  if (!vars) return reply_ok({c_.stats.to_json()});
  // One field of JSON lines, the largest variables first, cut to fit one frame.
  std::string lines;
  for (const std::string& v : c_.var_stats.json_lines(kStatsVarsMax)) {
    if (lines.size() + v.size() + 1 > wire::kMaxFrame - 64) break;
    lines += v + "\n";
  }
  return reply_ok({lines});
}

}  // namespace ckptfwd::fwd
