#include "store_checkpoints.h"

#include "cli.h"
#include "restore_paths.h"
#include "store/manifest/store_homes.h"

namespace ckptfwd::cli {

StoreCheckpoints store_checkpoints(const Store& st, ContainerCache& cache,
                                   const StoredAccount* acc) {
  StoreCheckpoints out;
  for (const auto& [path, e] : st.catalog.entries()) {
    StepFile f;
    f.path = path;
    f.size = e.size;
    f.mtime_ns = e.mtime_ns;
    if (acc)
      if (auto it = acc->per_file.find(path); it != acc->per_file.end()) f.stored = it->second;
    // The base's writer, else the first overlay's: the rank of a file written from several
    // nodes is that of whoever wrote it first.
    std::vector<std::pair<std::string, uint32_t>> layers;
    if (!e.container.empty()) layers.emplace_back(e.container, e.file_index);
    for (const Layer& l : e.overlays) layers.emplace_back(l.container, l.file_index);
    for (const auto& [name, index] : layers) {
      if (std::string node = container_node(name); !node.empty()) f.nodes.insert(node);
      if (f.rank >= 0) continue;
      std::string err;
      ContainerReader* r = cache.get(name, &err);
      if (!r) {
        out.problems.push_back(name + ": " + err);
        continue;
      }
      if (index < r->files().size()) f.rank = r->files()[index].rank;
    }
    out.files.push_back(std::move(f));
  }
  out.checkpoints = group_checkpoints(out.files, capture_dir_of(st));
  return out;
}

std::string capture_dir_of(const Store& st) {
  return st.single ? "" : store_homes::capture_dir(st.dir);
}

bool absolute_paths(const Store& st, std::vector<std::string>& paths, const std::string& cmd) {
  const std::string capture_dir = capture_dir_of(st);
  for (std::string& p : paths) {
    if (p.empty() || p[0] == '/') continue;
    if (capture_dir.empty()) {
      error(cmd + ": " + printable(p) + " is relative, and " + st.arg +
            " is not a store in its capture directory (.ckptfwd): give the path as ckptfwd ls " +
            st.arg + " shows it");
      return false;
    }
    p = capture_dir + "/" + p;
  }
  return true;
}

}  // namespace ckptfwd::cli
