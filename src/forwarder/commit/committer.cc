#include "forwarder/commit/committer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include "forwarder/commit/gc.h"
#include "forwarder/commit/manifest_turn.h"
#include "forwarder/staging/lease_journal_writer.h"
#include "forwarder/util/log.h"
#include "forwarder/util/store_paths.h"
#include "forwarder/util/test_hooks.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd {

namespace {
uint64_t committed_bytes(const std::vector<CatalogEntry>& entries) {
  uint64_t bytes = 0;
  for (const CatalogEntry& e : entries) bytes += e.size;
  return bytes;
}

// Stats and staged files of versions whose manifest record went in.
void settle(const CommitContext& c, const BatchResult& res,
            const std::vector<CatalogEntry>& entries, const std::vector<uint64_t>& committed) {
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
// One commit_batch (its manifest turn held by the caller): run() sorts the batch's
// versions into up to three manifest records, commit (whole files), create (new files,
// manifest.h) and overlay (files shared across nodes), appends them in that order and
// settles what went in.
class BatchCommit {
 public:
  BatchCommit(const CommitContext& c, std::unique_lock<std::mutex>& lk, const std::string& store,
              const std::vector<BatchFile>& files, const BatchResult& res, std::string* err)
      : c_(c),
        s_(c.state),
        lk_(lk),
        store_(store),
        files_(files),
        res_(res),
        err_(err),
        cpath_(store + "/" + res.container) {}

  bool run();

 private:
  using AppendFn = bool (*)(const std::string&, const std::string&, const ContainerIdentity&,
                            const std::vector<CatalogEntry>&, std::string*);
  using ApplyFn = void (Catalog::*)(const std::string&, const std::vector<CatalogEntry>&,
                                    const ContainerIdentity&);

  std::map<std::string, uint64_t> newest_whole_versions() const;
  void sort_into_records();
  void sort_overlays_by_version();
  bool append(AppendFn append_record, ApplyFn apply, const std::vector<CatalogEntry>& entries,
              const std::vector<uint64_t>& vids);
  void note_synced_snapshots(const std::vector<uint64_t>& vids);
  void settle_batch();

  const CommitContext& c_;
  State& s_;
  std::unique_lock<std::mutex>& lk_;
  const std::string& store_;
  const std::vector<BatchFile>& files_;
  const BatchResult& res_;
  std::string* err_;
  const std::string cpath_;  // the container
  // The records, and the vids each names.
  std::vector<CatalogEntry> entries_, creates_, overlays_;
  std::vector<uint64_t> committed_, committed_creates_, committed_overlays_;
  std::vector<uint64_t> overlay_order_;  // Version::order of each overlay
  std::vector<uint64_t> gone_;           // dropped or superseded: in the container, but never named
  std::vector<std::pair<uint64_t, Version::Synced>> snapshots_;  // fsync snapshots committed
  // What the records that went in name.
  std::vector<CatalogEntry> done_;
  std::vector<uint64_t> done_vids_;
};

bool BatchCommit::run() {
  sort_into_records();
  sort_overlays_by_version();
  // Whole files first: an overlay of the same path in this batch goes on top of them.
  if (!append(manifest::append_commit, &Catalog::apply_commit, entries_, committed_) ||
      !append(manifest::append_create, &Catalog::apply_create, creates_, committed_creates_) ||
      !append(manifest::append_overlay, &Catalog::apply_overlay, overlays_, committed_overlays_))
    return false;
  settle_batch();
  return true;
}

// Several versions of one path in a batch: the newest whole version (by open order, not
// close order) is the one the catalog must name, and partial versions newer than it are
// stacked on it as overlays, in version order. Per path: the newest whole version's order.
std::map<std::string, uint64_t> BatchCommit::newest_whole_versions() const {
  std::map<std::string, uint64_t> newest_full;
  for (const BatchFile& f : files_)
    if (Version* v = s_.find(f.vid); v && !v->dropped && !v->partial)
      newest_full[v->path] = std::max(newest_full[v->path], v->order);
  return newest_full;
}

// Each version of the batch into its record (with its current path), or gone_ (dropped,
// superseded), or back to kClosed (renamed into another store meanwhile).
void BatchCommit::sort_into_records() {
  std::map<std::string, uint64_t> newest_full = newest_whole_versions();
  for (size_t i = 0; i < files_.size(); ++i) {
    Version* v = s_.find(files_[i].vid);
    if (!v) continue;
    // An older partial version under a newer partial one is named anyway (overlays are
    // stacked in order, the newer covers it): a container file no record names must be a
    // whole file for `ckptfwd verify`, and an overlay's hash is not one.
    bool superseded = v->order < newest_full[v->path];
    if (v->partial && v->based_on_store && !v->dropped && !s_.catalogs.find(store_, v->path)) {
      LOG_INFO(
          "%s was deleted or renamed on the store (by another node) after v%llu opened "
          "it here: its overlay is not committed",
          v->path.c_str(), static_cast<unsigned long long>(v->vid));
      superseded = true;
    }
    if (v->dropped || superseded) {
      gone_.push_back(v->vid);  // superseded: in the container, but never named
      continue;
    }
    if (store_for(c_.cfg, v->path) != store_) {
      // Renamed into another store's directory meanwhile: write it again there.
      v->state = VState::kClosed;
      s_.work_cv.notify_all();
      continue;
    }
    CatalogEntry e;
    e.path = v->path;
    e.container = res_.container;
    e.file_index = static_cast<uint32_t>(i);
    e.size = res_.sizes[i];
    e.mode = v->mode;
    e.mtime_ns = v->mtime_ns;
    if (v->partial) {  // no fsync dedupe for overlays (lifecycle_verbs.cc)
      overlay_order_.push_back(v->order);
      overlays_.push_back(std::move(e));
      committed_overlays_.push_back(v->vid);
      continue;
    }
    if (v->snapshot_of && i < res_.hashes.size())  // noted once its record is durable
      snapshots_.push_back({v->vid, Version::Synced{true, e.path, e.container, e.file_index, e.mode,
                                                    e.size, res_.hashes[i], e.mtime_ns}});
    if (v->created) {
      creates_.push_back(std::move(e));
      committed_creates_.push_back(v->vid);
    } else {
      entries_.push_back(std::move(e));
      committed_.push_back(v->vid);
    }
  }
}

// Overlays of one path apply in version order (a snapshot before its version).
void BatchCommit::sort_overlays_by_version() {
  std::vector<size_t> idx(overlays_.size());
  for (size_t k = 0; k < idx.size(); ++k) idx[k] = k;
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return overlay_order_[a] < overlay_order_[b]; });
  std::vector<CatalogEntry> sorted;
  for (size_t k : idx) sorted.push_back(std::move(overlays_[k]));
  overlays_.swap(sorted);
}

// Appends one record (nothing when it names nothing) and applies it to the cached
// catalog. Each record that went in settles its versions at once: a failure after it
// leaves the container named and only the rest to retry (the batcher drops what is
// settled); a failure before any removes the container.
bool BatchCommit::append(AppendFn append_record, ApplyFn apply,
                         const std::vector<CatalogEntry>& entries,
                         const std::vector<uint64_t>& vids) {
  if (entries.empty()) return true;
  // The append and its fdatasync without the state lock: the versions stay kCommitting
  // and the catalog frozen until it is durable (manifest_turn.h).
  lk_.unlock();
  if (test_hooks().before_manifest_append) test_hooks().before_manifest_append();
  int64_t t0 = monotonic_ns();
  bool ok = append_record(store_, res_.container, res_.identity, entries, err_);
  c_.stats.commit_ns += monotonic_ns() - t0;
  if (!ok && done_.empty()) ::unlink(cpath_.c_str());  // unreferenced; the retry writes a fresh one
  lk_.lock();
  if (!ok) {
    if (!done_.empty()) {
      settle(c_, res_, done_, done_vids_);
      for (uint64_t vid : gone_) s_.forget(vid);
    }
    return false;
  }
  if (!s_.catalogs.replay_appended(store_))
    (s_.catalogs.get(store_).*apply)(res_.container, entries, res_.identity);
  note_synced_snapshots(vids);
  done_.insert(done_.end(), entries.begin(), entries.end());
  done_vids_.insert(done_vids_.end(), vids.begin(), vids.end());
  return true;
}

// The fsync snapshots among vids (a record of them just went in): the open version each
// copies may close unchanged, and then this commit is enough.
void BatchCommit::note_synced_snapshots(const std::vector<uint64_t>& vids) {
  for (auto& [vid, synced] : snapshots_) {
    if (std::find(vids.begin(), vids.end(), vid) == vids.end()) continue;
    Version* v = s_.find(vid);
    Version* o = v ? s_.find(v->snapshot_of) : nullptr;
    if (o && o->state == VState::kOpen && o->last_snapshot == vid) o->synced = synced;
  }
}

// Every record went in: the versions they name are settled, the gone ones forgotten, and
// the container removed when it names nothing (all dropped meanwhile).
void BatchCommit::settle_batch() {
  if (done_.empty()) {  // all dropped meanwhile
    lk_.unlock();
    ::unlink(cpath_.c_str());
    lk_.lock();
  }
  settle(c_, res_, done_, done_vids_);
  for (uint64_t vid : gone_) s_.forget(vid);
  s_.done_cv.notify_all();
  if (!done_.empty())
    LOG_INFO("committed %zu files (%llu bytes, %zu of them as overlays) as %s (%llu bytes)",
             done_.size(), static_cast<unsigned long long>(committed_bytes(done_)),
             overlays_.size(), cpath_.c_str(), static_cast<unsigned long long>(res_.bytes_stored));
  if (!done_.empty()) gc_due(c_, store_);
}
}  // namespace

bool commit_batch(const CommitContext& c, std::unique_lock<std::mutex>& lk,
                  const std::string& store, const std::vector<BatchFile>& files,
                  const BatchResult& res, std::string* err) {
  // Held until the catalog shows what went in: the verbs that would change what the
  // records say wait for it (manifest_turn.h).
  ManifestTurn turn(c.state, lk, {store});
  // The batch's versions gone from the lease journal in one write (lease_journal_writer.h).
  LeaseJournalWriter::Batch journal(c.state.journal);
  return BatchCommit(c, lk, store, files, res, err).run();
}

void fail_batch(const CommitContext& c, const std::vector<BatchFile>& files,
                Clock::duration retry_after) {
  State& s = c.state;
  LeaseJournalWriter::Batch journal(s.journal);
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
