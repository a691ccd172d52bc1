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

bool checkpoint_paths(const Store& st, bool latest, const std::string& step,
                      std::vector<std::string>& paths, const std::string& cmd,
                      const std::string& doing, std::string* label) {
  ContainerCache cache(st.dir);
  StoreCheckpoints sc = store_checkpoints(st, cache, nullptr);
  for (const std::string& p : sc.problems) error("warning: " + p);
  int pick = -1;
  if (latest) {
    pick = latest_complete(sc.checkpoints);
    if (pick < 0) {
      error(cmd + ": " + st.arg +
            (sc.checkpoints.empty() ? " holds no checkpoint" : " holds no complete checkpoint") +
            " (ckptfwd ls --steps " + st.arg + "; --step STEP takes an incomplete one)");
      return false;
    }
  } else {
    for (size_t i = 0; i < sc.checkpoints.size(); ++i)
      if (step_matches(sc.checkpoints[i].step, step)) pick = static_cast<int>(i);
    if (pick < 0) {
      error(cmd + ": no checkpoint " + printable(step) + " in " + st.arg + " (ckptfwd ls --steps " +
            st.arg + " lists them)");
      return false;
    }
  }
  const Checkpoint& cp = sc.checkpoints[pick];
  if (!cp.doubt.empty())
    error("warning: checkpoint " + printable(cp.step) + ": " + printable(cp.doubt) +
          " (ckptfwd ls --steps " + st.arg + ")");
  if (!cp.complete)
    error("warning: checkpoint " + printable(cp.step) + " is not complete (" +
          printable(cp.missing) + "); " + doing + " the files it has");
  fprintf(stderr, "ckptfwd: %s checkpoint %s: %zu files, %s\n", doing.c_str(),
          printable(cp.step).c_str(), cp.files.size(), human_bytes(cp.bytes_in).c_str());
  for (size_t f : cp.files) paths.push_back(sc.files[f].path);
  if (label) *label = cp.step;
  return true;
}

}  // namespace ckptfwd::cli
