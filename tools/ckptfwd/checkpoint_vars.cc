#include "checkpoint_vars.h"

#include <cstdio>

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

CheckpointVar checkpoint_var(const Store& st, ContainerCache& cache,
                             const std::vector<std::string>& paths, const std::string& var,
                             int rank, const std::string& cmd) {
  CheckpointVar out;
  for (const std::string& path : paths) {
    const auto it = st.catalog.entries().find(path);
    if (it == st.catalog.entries().end()) continue;
    const CatalogEntry& e = it->second;
    out.file_bytes += e.size;
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
    if (holder.empty()) {
      if (e.overlays.empty() || rank >= 0) continue;
      auto file = std::make_shared<StackedFile>();
      auto map = std::make_unique<VariableMap>();
      std::string note;
      if (!file->open(e, cache, &err) || !file->infer(path, *map, &note, &err)) {
        error(cmd + ": " + err);
        out.failed = true;
        continue;
      }
      if (!note.empty())
        fprintf(stderr, "ckptfwd %s: %s: %s\n", cmd.c_str(), printable(path).c_str(), note.c_str());
      const Variable* v = find_var(*map, var);
      if (!v) continue;
      fprintf(stderr,
              "ckptfwd %s: %s was written from several nodes: its %zu layers stacked (%s "
              "decoded) and its variables found by %s\n",
              cmd.c_str(), printable(path).c_str(), e.overlays.size() + !e.container.empty(),
              human_bytes(file->size()).c_str(), map->source.c_str());
      out.held.push_back({path, nullptr, 0, -1, v, file});
      out.stacked_maps.push_back(std::move(map));
      continue;
    }
    ContainerReader* r = cache.get(holder, &err);
    if (!r || index >= r->files().size()) {
      error(cmd + ": " + holder + ": " + (r ? "file index out of range" : err));
      out.failed = true;
      continue;
    }
    const FileEntry& fe = r->files()[index];
    if (rank >= 0 && fe.rank != rank) continue;
    const Variable* v = find_var(fe.vars, var);
    if (v) out.held.push_back({path, r, index, fe.rank, v, nullptr});
  }
  return out;
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
