#include "forwarder/committer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include "common/manifest.h"
#include "forwarder/log.h"
#include "forwarder/store_paths.h"

namespace ckptfwd::fwd {

bool commit_batch(Core& c, const std::string& store, const std::vector<BatchFile>& files,
                  const BatchResult& res, std::string* err) {
  State& s = c.state;
  std::vector<CatalogEntry> entries;
  std::vector<uint64_t> committed, gone;
  // Two versions of one path in a batch: the newest (by open order, not close order) is
  // the one the catalog must name.
  std::map<std::string, uint64_t> newest_order;
  for (const BatchFile& f : files)
    if (Version* v = s.find(f.vid); v && !v->dropped)
      newest_order[v->path] = std::max(newest_order[v->path], v->order);
  for (size_t i = 0; i < files.size(); ++i) {
    Version* v = s.find(files[i].vid);
    if (!v) continue;
    if (v->dropped || v->order < newest_order[v->path]) {
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
    if (v->snapshot_of) {
      // The open version it copies may close unchanged: then this commit is enough.
      Version* o = s.find(v->snapshot_of);
      if (o && o->state == VState::kOpen && o->last_snapshot == v->vid && i < res.hashes.size())
        o->synced = Version::Synced{true, e.path, e.container, e.file_index, e.mode,
                                    e.size, res.hashes[i], e.mtime_ns};
    }
    entries.push_back(std::move(e));
    committed.push_back(v->vid);
  }
  std::string cpath = store + "/" + res.container;
  if (!entries.empty()) {
    int64_t t0 = monotonic_ns();
    bool ok = manifest::append_commit(store, res.container, entries, err);
    c.stats.commit_ns += monotonic_ns() - t0;
    if (!ok) {
      ::unlink(cpath.c_str());  // unreferenced; the retry writes a fresh one
      return false;
    }
    s.catalogs.get(store).apply_commit(res.container, entries);
    c.stats.containers_written++;
    c.stats.bytes_stored += res.bytes_stored;
  } else {
    ::unlink(cpath.c_str());  // every file was dropped meanwhile
  }
  c.stats.compress_ns += res.compress_ns;
  c.stats.write_ns += res.write_ns;
  uint64_t bytes = 0;
  for (const CatalogEntry& e : entries) bytes += e.size;
  c.stats.files_committed += entries.size();
  c.stats.bytes_committed += bytes;
  for (uint64_t vid : committed) s.forget(vid);
  for (uint64_t vid : gone) s.forget(vid);
  s.done_cv.notify_all();
  if (!entries.empty())
    LOG_INFO("committed %zu files (%llu bytes) as %s (%llu bytes)", entries.size(),
             static_cast<unsigned long long>(bytes), cpath.c_str(),
             static_cast<unsigned long long>(res.bytes_stored));
  return true;
}

void fail_batch(Core& c, const std::vector<BatchFile>& files, Clock::duration retry_after) {
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
