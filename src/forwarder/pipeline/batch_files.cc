#include "forwarder/pipeline/batch_files.h"

#include "forwarder/pipeline/commit_ranges.h"
#include "forwarder/staging/hints.h"
#include "forwarder/util/log.h"

namespace ckptfwd::fwd {

namespace {
// In-place file i, just mapped: its mapping guarded and its identity taken (for
// mapped_writable_by). False when it cannot be watched while it is read.
bool guard_in_place(const BatchFile& f, size_t i, OpenedFiles& o) {
  o.guards[i] = std::make_unique<BusGuard>(o.maps[i].data(), o.maps[i].size());
  const bool unguarded = o.maps[i].size() > 0 && !o.guards[i]->guarded();
  return o.watched[i] && !unguarded && ::stat(f.data_path.c_str(), &o.identity[i]) == 0;
}

// The container entry and the merge input of file f, mapped as m (the entry's hash and
// variables come later).
void describe_file(const BatchFile& f, const MappedFile& m, FileEntry& e, MergeInput& in) {
  e.path = f.path;
  e.rank = f.rank;
  e.size = m.size();
  e.mode = f.mode;
  e.mtime_ns = f.mtime_ns;
  e.version = f.vid;
  e.views = f.views;
  in.base = m.data();
  in.size = m.size();
  in.rank = f.rank;
  in.vars = &e.vars;
  in.mergeable = !f.partial;
}

}  // namespace

bool open_batch_files(const std::vector<BatchFile>& files, WorkerPool& pool, OpenedFiles& o,
                      BatchResult& out, std::vector<size_t>* changed, std::string* err) {
  for (size_t i = 0; i < files.size(); ++i)
    if (files[i].in_place) {
      o.watched[i] = o.watches.add(i, files[i].data_path);
      o.any_in_place = true;
    }
  out.sizes.assign(files.size(), 0);
  out.hashes.assign(files.size(), 0);
  out.typed.assign(files.size(), 0);
  // Small files are copied (MappedFile::copy_small), up to kCopiedMax bytes a batch: the
  // copies stay in memory while the batch is encoded, where the pages of a mapping can be
  // given back (MappedFile::release), so a batch of many small files maps the rest.
  constexpr uint64_t kCopiedMax = 64u << 20;
  uint64_t copied = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const BatchFile& f = files[i];
    const bool copy =
        !f.in_place && f.size <= MappedFile::kCopyMax && copied + f.size <= kCopiedMax;
    if (copy) copied += f.size;
    bool opened = f.in_place ? o.maps[i].open(f.data_path, f.size, err)
                  : copy     ? o.maps[i].copy_small(f.data_path, f.size, err)
                  : f.live   ? o.maps[i].read_private(f.data_path, f.size, &pool, err)
                             : o.maps[i].open(f.data_path, f.size, err);
    if (!opened) return false;
    if (f.in_place && !guard_in_place(f, i, o)) {
      LOG_DEBUG("%s: cannot watch it while it is read in place: copying it", f.path.c_str());
      changed->push_back(i);
    }
    uint64_t n = o.maps[i].size();
    FileEntry& e = o.entries[i];
    MergeInput& in = o.inputs[i];
    describe_file(f, o.maps[i], e, in);
    if (!commit_extents(f, in.base, n, e, in.commit, &o.hashed[i], err)) return false;
    out.typed[i] = hints_bytes(e.hints);
    out.sizes[i] = n;
  }
  return true;
}

}  // namespace ckptfwd::fwd
