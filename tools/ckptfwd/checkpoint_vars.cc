#include "checkpoint_vars.h"

#include <fnmatch.h>

#include <cstdio>
#include <set>

#include "cli.h"
#include "restore_paths.h"

namespace ckptfwd::cli {

const Variable* find_var(const VariableMap& m, const std::string& var) {
  for (const Variable& v : m.vars)
    if (v.key == var) return &v;
  const std::string bare = !var.empty() && var[0] == '/' ? var.substr(1) : var;
  for (const Variable& v : m.vars) {
    const std::string name = !v.name.empty() && v.name[0] == '/' ? v.name.substr(1) : v.name;
    if (name == bare) return &v;
  }
  return nullptr;
}

bool var_matches(const Variable& v, const std::string& glob) {
  const std::string bare = !v.name.empty() && v.name[0] == '/' ? v.name.substr(1) : v.name;
  return fnmatch(glob.c_str(), v.key.c_str(), 0) == 0 ||
         fnmatch(glob.c_str(), v.name.c_str(), 0) == 0 ||
         fnmatch(glob.c_str(), bare.c_str(), 0) == 0;
}

bool FileMaps::get(const std::string& path, FileMap& out, int rank) {
  out = FileMap{};
  const auto it = st_.catalog.entries().find(path);
  if (it == st_.catalog.entries().end()) return true;
  const CatalogEntry& e = it->second;
  std::string holder;
  uint32_t index = 0;
  if (e.overlays.empty()) {
    holder = e.container;
    index = e.file_index;
  } else if (e.overlays.back().whole_hash && e.overlays.back().size == e.size) {
    holder = e.overlays.back().container;
    index = e.overlays.back().file_index;
  }
  std::string err;
  if (!holder.empty()) {
    ContainerReader* r = cache_.get(holder, &err);
    if (!r || index >= r->files().size()) {
      error(cmd_ + ": " + holder + ": " + (r ? "file index out of range" : err));
      return false;
    }
    out = FileMap{&r->files()[index].vars, r, index, r->files()[index].rank, nullptr};
    return true;
  }
  if (e.overlays.empty() || !stack_ || rank >= 0) return true;
  std::unique_ptr<Stacked>& s = stacked_[path];
  if (!s) {
    s = std::make_unique<Stacked>();
    s->file = std::make_shared<StackedFile>();
    std::string note;
    s->ok = s->file->open(e, cache_, &err) && s->file->infer(path, s->map, &note, &err);
    if (!s->ok) error(cmd_ + ": " + err);
    if (s->ok && !note.empty())
      fprintf(stderr, "ckptfwd %s: %s: %s\n", cmd_.c_str(), printable(path).c_str(), note.c_str());
    if (s->ok)
      fprintf(stderr,
              "ckptfwd %s: %s was written from several nodes: its %zu layers stacked (%s "
              "decoded) and its variables found by %s\n",
              cmd_.c_str(), printable(path).c_str(), e.overlays.size() + !e.container.empty(),
              human_bytes(s->file->size()).c_str(),
              s->map.source.empty() ? "nothing (no map)" : s->map.source.c_str());
  }
  if (!s->ok) return false;
  out = FileMap{&s->map, nullptr, 0, -1, s->file};
  return true;
}

CheckpointVar checkpoint_var(FileMaps& maps, const std::vector<std::string>& paths,
                             const std::string& var, int rank) {
  CheckpointVar out;
  for (const std::string& path : paths) {
    const auto it = maps.store().catalog.entries().find(path);
    if (it != maps.store().catalog.entries().end()) out.file_bytes += it->second.size;
    FileMap f;
    if (!maps.get(path, f, rank)) {
      out.failed = true;
      continue;
    }
    if (!f.map || (rank >= 0 && f.rank != rank)) continue;
    const Variable* v = find_var(*f.map, var);
    if (v) out.held.push_back({path, f.reader, f.index, f.rank, v, f.stacked});
  }
  return out;
}

std::vector<std::string> matching_keys(FileMaps& maps, const std::vector<std::string>& paths,
                                       const std::string& glob, int rank, bool* failed) {
  std::set<std::string> keys;
  for (const std::string& path : paths) {
    FileMap f;
    if (!maps.get(path, f, rank)) {
      *failed = true;
      continue;
    }
    if (!f.map || (rank >= 0 && f.rank != rank)) continue;
    for (const Variable& v : f.map->vars)
      if (var_matches(v, glob)) keys.insert(v.key);
  }
  return {keys.begin(), keys.end()};
}

bool extent_lossy(const HeldVar& h, const VarExtent& x, codec::LossyRecord* acc, bool* any) {
  codec::LossyRecord r;
  const bool lossy =
      h.stacked ? h.stacked->lossy(&r) : h.reader->span_lossy(h.index, x.file_off, x.len, &r);
  if (lossy) codec::merge_lossy(r, acc, any);
  return lossy;
}

bool read_extent(const HeldVar& h, const VarExtent& x, std::vector<uint8_t>& out, uint64_t* decoded,
                 std::string* err) {
  if (x.filtered) {
    *err = h.var->key + " in " + printable(h.path) + ": an extent at byte " +
           std::to_string(x.file_off) +
           " went through an HDF5 filter (compressed): its values need HDF5 to read "
           "(ckptfwd restore the file, then h5dump)";
    return false;
  }
  if (!h.stacked) return h.reader->read_span(h.index, x.file_off, x.len, out, err, decoded);
  if (x.file_off > h.stacked->size() || x.len > h.stacked->size() - x.file_off) {
    *err = h.var->key + " in " + printable(h.path) + ": an extent past the stacked file's end";
    return false;
  }
  if (decoded && !h.stacked->counted) *decoded += h.stacked->size();
  h.stacked->counted = true;
  out.assign(h.stacked->data() + x.file_off, h.stacked->data() + x.file_off + x.len);
  return true;
}

}  // namespace ckptfwd::cli
