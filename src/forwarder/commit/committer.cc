#include "forwarder/commit/committer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include "store/manifest.h"
#include "forwarder/commit/gc.h"
#include "forwarder/util/log.h"
#include "forwarder/commit/manifest_turn.h"
#include "forwarder/util/store_paths.h"
#include "forwarder/util/test_hooks.h"

namespace ckptfwd::fwd {

namespace {
uint64_t committed_bytes(const std::vector<CatalogEntry>& entries) {
  uint64_t bytes = 0;
  for (const CatalogEntry& e : entries) bytes += e.size;
  return bytes;
}

// Stats and staged files of versions whose manifest record went in.
void settle(const CommitContext& c, const BatchResult& res, const std::vector<CatalogEntry>& entries,
            const std::vector<uint64_t>& committed) {
  State& s = c.state;
  if (!entries.empty()) {
    c.stats.containers_written++;
    c.stats.bytes_stored += res.bytes_stored;
  }
  c.stats.infer_ns += res.infer_ns;
  c.stats.compress_ns += res.compress_ns;
  c.stats.hash_ns += res.hash_ns;
  c.stats.bytes_deduped += res.dedup_bytes;
  c.var_stats.add(res.streams);
  c.stats.bytes_referenced += res.referenced_bytes;
  for (const StreamReport& r : res.streams) {
    if (r.dtype == "bytes") continue;
    c.stats.typed_bytes_in += r.raw;
    c.stats.typed_bytes_out += r.stored;
    c.stats.typed_encode_ns += static_cast<uint64_t>(r.encode_ns);
    LOG_INFO("%s: stream %s (%s): %s, ratio %.2f at %.0f MB/s per core", res.container.c_str(),
             r.key.c_str(), r.dtype.c_str(), r.chain.c_str(),
             r.stored ? static_cast<double>(r.raw) / r.stored : 0.0,
             r.encode_ns ? r.raw * 1e3 / r.encode_ns : 0.0);
  }
  c.stats.write_ns += res.write_ns;
  c.stats.files_committed += entries.size();
  c.stats.bytes_committed += committed_bytes(entries);
  for (const CatalogEntry& e : entries) {
    if (e.file_index < res.typed.size()) c.stats.bytes_typed += res.typed[e.file_index];
    if (e.file_index < res.mapped.size() && res.mapped[e.file_index]) {
      c.stats.files_mapped++;
      c.stats.bytes_mapped += res.mapped[e.file_index];
    }
    if (e.file_index < res.infer_failed.size())
      c.stats.infer_failures += res.infer_failed[e.file_index];
  }
  Clock::time_point durable = Clock::now();
  for (uint64_t vid : committed) s.costs.committed(vid, durable);
  for (uint64_t vid : committed) s.forget(vid);
  s.done_cv.notify_all();
}
}  // namespace

bool commit_batch(const CommitContext& c, std::unique_lock<std::mutex>& lk, const std::string& store,
                  const std::vector<BatchFile>& files, const BatchResult& res, std::string* err) {
  State& s = c.state;
  // Held until the catalog shows what went in: the verbs that would change what the
  // records say wait for it (manifest_turn.h).
  ManifestTurn turn(s, lk, {store});
  // Up to three manifest records: commit (whole files), create (new files, manifest.h),
  // overlay (files shared across nodes), appended in that order.
  std::vector<CatalogEntry> entries, creates, overlays;
  std::vector<uint64_t> committed, committed_creates, committed_overlays, gone;
  std::vector<uint64_t> overlay_order;
  std::vector<std::pair<uint64_t, Version::Synced>> snapshots;  // fsync snapshots committed
  // Several versions of one path in a batch: the newest whole version (by open order, not
  // close order) is the one the catalog must name, and partial versions newer than it are
  // stacked on it as overlays, in version order.
  std::map<std::string, uint64_t> newest_full;
  for (const BatchFile& f : files)
    if (Version* v = s.find(f.vid); v && !v->dropped && !v->partial)
      newest_full[v->path] = std::max(newest_full[v->path], v->order);
  for (size_t i = 0; i < files.size(); ++i) {
    Version* v = s.find(files[i].vid);
    if (!v) continue;
    // An older partial version under a newer partial one is named anyway (overlays are
    // stacked in order, the newer covers it): a container file no record names must be a
    // whole file for `ckptfwd verify`, and an overlay's hash is not one.
    bool superseded = v->order < newest_full[v->path];
    if (v->partial && v->based_on_store && !v->dropped && !s.catalogs.find(store, v->path)) {
      LOG_INFO(
          "%s was deleted or renamed on the store (by another node) after v%llu opened "
          "it here: its overlay is not committed",
          v->path.c_str(), static_cast<unsigned long long>(v->vid));
      superseded = true;
    }
    if (v->dropped || superseded) {
      gone.push_back(v->vid);  // superseded: in the container, but never named
      continue;
    }
    if (store_for(c.cfg, v->path) != store) {
      // Renamed into another store's directory meanwhile: write it again there.
      v->state = VState::kClosed;
      s.work_cv.notify_all();
      continue;
    }
    CatalogEntry e;
    e.path = v->path;
    e.container = res.container;
    e.file_index = static_cast<uint32_t>(i);
    e.size = res.sizes[i];
    e.mode = v->mode;
    e.mtime_ns = v->mtime_ns;
    if (v->partial) {  // no fsync dedupe for overlays (lifecycle_verbs.cc)
      overlay_order.push_back(v->order);
      overlays.push_back(std::move(e));
      committed_overlays.push_back(v->vid);
      continue;
    }
    if (v->snapshot_of && i < res.hashes.size())  // noted once its record is durable
      snapshots.push_back({v->vid, Version::Synced{true, e.path, e.container, e.file_index, e.mode,
                                                   e.size, res.hashes[i], e.mtime_ns}});
    if (v->created) {
      creates.push_back(std::move(e));
      committed_creates.push_back(v->vid);
    } else {
      entries.push_back(std::move(e));
      committed.push_back(v->vid);
    }
  }
  {  // overlays of one path apply in version order (a snapshot before its version)
    std::vector<size_t> idx(overlays.size());
    for (size_t k = 0; k < idx.size(); ++k) idx[k] = k;
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t a, size_t b) { return overlay_order[a] < overlay_order[b]; });
    std::vector<CatalogEntry> sorted;
    for (size_t k : idx) sorted.push_back(std::move(overlays[k]));
    overlays.swap(sorted);
  }
  std::string cpath = store + "/" + res.container;
  // Each record that went in settles its versions at once: a failure after it leaves
  // the container named and only the rest to retry (the batcher drops what is settled).
  std::vector<CatalogEntry> done;
  std::vector<uint64_t> done_vids;
  using AppendFn = bool (*)(const std::string&, const std::string&, const ContainerIdentity&,
                            const std::vector<CatalogEntry>&, std::string*);
  using ApplyFn = void (Catalog::*)(const std::string&, const std::vector<CatalogEntry>&,
                                    const ContainerIdentity&);
  auto append = [&](AppendFn append_record, ApplyFn apply, std::vector<CatalogEntry>& files,
                    std::vector<uint64_t>& vids) {
    if (files.empty()) return true;
    // The append and its fdatasync without the state lock: the versions stay kCommitting
    // and the catalog frozen until it is durable (manifest_turn.h).
    lk.unlock();
    if (test_hooks().before_manifest_append) test_hooks().before_manifest_append();
    int64_t t0 = monotonic_ns();
    bool ok = append_record(store, res.container, res.identity, files, err);
    c.stats.commit_ns += monotonic_ns() - t0;
    if (!ok && done.empty()) ::unlink(cpath.c_str());  // unreferenced; the retry writes a fresh one
    lk.lock();
    if (!ok) {
      if (!done.empty()) {
        settle(c, res, done, done_vids);
        for (uint64_t vid : gone) s.forget(vid);
      }
      return false;
    }
    if (!s.catalogs.replay_appended(store))
      (s.catalogs.get(store).*apply)(res.container, files, res.identity);
    for (auto& [vid, synced] : snapshots) {
      // The open version it copies may close unchanged: then this commit is enough.
      if (std::find(vids.begin(), vids.end(), vid) == vids.end()) continue;
      Version* v = s.find(vid);
      Version* o = v ? s.find(v->snapshot_of) : nullptr;
      if (o && o->state == VState::kOpen && o->last_snapshot == vid) o->synced = synced;
    }
    done.insert(done.end(), files.begin(), files.end());
    done_vids.insert(done_vids.end(), vids.begin(), vids.end());
    return true;
  };
  // Whole files first: an overlay of the same path in this batch goes on top of them.
  if (!append(manifest::append_commit, &Catalog::apply_commit, entries, committed) ||
      !append(manifest::append_create, &Catalog::apply_create, creates, committed_creates) ||
      !append(manifest::append_overlay, &Catalog::apply_overlay, overlays, committed_overlays))
    return false;
  if (done.empty()) {  // all dropped meanwhile
    lk.unlock();
    ::unlink(cpath.c_str());
    lk.lock();
  }
  entries.swap(done);
  committed.swap(done_vids);
  settle(c, res, entries, committed);
  for (uint64_t vid : gone) s.forget(vid);
  s.done_cv.notify_all();
  if (!entries.empty())
    LOG_INFO("committed %zu files (%llu bytes, %zu of them as overlays) as %s (%llu bytes)",
             entries.size(), static_cast<unsigned long long>(committed_bytes(entries)),
             overlays.size(), cpath.c_str(), static_cast<unsigned long long>(res.bytes_stored));
  if (!entries.empty()) gc_due(c, store);
  return true;
}

void fail_batch(const CommitContext& c, const std::vector<BatchFile>& files, Clock::duration retry_after) {
  State& s = c.state;
  for (const BatchFile& f : files) {
    Version* v = s.find(f.vid);
    if (!v) continue;
    if (v->dropped) {
      s.forget(v->vid);
      continue;
    }
    if (v->state != VState::kCommitting) continue;
    v->state = VState::kFailed;
    v->failures++;
    v->error = EIO;
    v->retry_at = Clock::now() + retry_after;
  }
  c.stats.errors++;
  s.done_cv.notify_all();
  s.work_cv.notify_all();
}

}  // namespace ckptfwd::fwd
