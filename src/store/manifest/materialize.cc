// Layered restore of a catalog entry (see materialize.h).
#include "store/manifest/materialize.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

namespace ckptfwd {

bool is_plain_container_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

namespace {

// Opens the container of one layer and checks that it is the container the MANIFEST
// record was written for (id; unknown for an older-format record) and holds the file it
// names: another container under this name would hand back some other file's bytes.
ContainerReader* layer_reader(const ContainerSource& containers, const std::string& what,
                              const std::string& name, const ContainerIdentity& id, uint32_t index,
                              std::string* err) {
  std::string why;
  ContainerReader* r = containers(name, &why);
  if (!r) {
    if (err) *err = what + " (container " + name + "): " + why;
    return nullptr;
  }
  if (id.known() && r->identity() != id) {
    if (err)
      *err = what + " (container " + name + "): not the container the MANIFEST recorded (" +
             describe(r->identity()) + " on disk, the record says " + describe(id) +
             "): replaced or swapped with another container; refusing to read it";
    return nullptr;
  }
  if (index >= r->files().size()) {
    if (err)
      *err = what + " (container " + name + "): the MANIFEST names file " + std::to_string(index) +
             " but the container holds " + std::to_string(r->files().size()) +
             " (MANIFEST and container disagree; run ckptfwd verify)";
    return nullptr;
  }
  return r;
}

}  // namespace

bool materialize_entry(const CatalogEntry& e, const ContainerSource& containers, int fd,
                       std::string* err, bool fresh) {
  auto fail_errno = [&](const std::string& what) {
    if (err) *err = what + " '" + e.path + "': " + strerror(errno);
    return false;
  };
  // Holes of the base and of the overlays must read as zeros or as the layer below, never
  // as whatever fd held before.
  if (!fresh && ::ftruncate(fd, 0) != 0) return fail_errno("cannot truncate the target of");
  uint64_t size = 0;  // fd's size, known without an fstat while only the base was written
  if (!e.container.empty()) {
    ContainerReader* r =
        layer_reader(containers, "base", e.container, e.base_id, e.file_index, err);
    if (!r) return false;
    std::string why;
    if (!r->restore_file(e.file_index, fd, &why, true)) {
      if (err) *err = "base (container " + e.container + "): " + why;
      return false;
    }
    size = r->files()[e.file_index].size;
  }
  for (size_t i = 0; i < e.overlays.size(); ++i) {
    const Layer& l = e.overlays[i];
    std::string what =
        "overlay " + std::to_string(i + 1) + " of " + std::to_string(e.overlays.size());
    ContainerReader* r = layer_reader(containers, what, l.container, l.id, l.file_index, err);
    if (!r) return false;
    std::string why;
    if (!r->overlay_file(l.file_index, fd, &why, l.whole_hash)) {
      if (err) *err = what + " (container " + l.container + "): " + why;
      return false;
    }
  }
  // The manifest's effective size wins when it is larger (a layer may record a size past
  // the bytes its container holds, e.g. a set_size from another node).
  struct stat st;
  if (!e.overlays.empty()) {
    if (::fstat(fd, &st) != 0) return fail_errno("cannot stat the target of");
    size = static_cast<uint64_t>(st.st_size);
  }
  if (size < e.size && ::ftruncate(fd, static_cast<off_t>(e.size)) != 0)
    return fail_errno("cannot set the size of");
  return true;
}

bool materialize_entries(const std::vector<const CatalogEntry*>& es,
                         const ContainerSource& containers, const std::vector<int>& fds,
                         std::vector<std::string>& errs) {
  errs.assign(es.size(), "");
  // Entries whose base is all there is, by container.
  std::map<std::string, std::vector<size_t>> together;
  std::vector<size_t> alone;
  for (size_t k = 0; k < es.size(); ++k)
    if (es[k]->overlays.empty() && !es[k]->container.empty())
      together[es[k]->container].push_back(k);
    else
      alone.push_back(k);
  bool all = true;
  for (auto& [name, ks] : together) {
    if (ks.size() == 1) {
      alone.push_back(ks[0]);
      continue;
    }
    std::vector<size_t> idx, which;
    std::vector<int> to;
    ContainerReader* r = nullptr;
    for (size_t k : ks) {
      const CatalogEntry& e = *es[k];
      ContainerReader* rk =
          layer_reader(containers, "base", e.container, e.base_id, e.file_index, &errs[k]);
      if (!rk) {
        all = false;
        continue;
      }
      if (r && rk != r) {  // a source that opens a container twice: this one alone
        alone.push_back(k);
        continue;
      }
      r = rk;
      idx.push_back(e.file_index);
      to.push_back(fds[k]);
      which.push_back(k);
    }
    if (!r) continue;
    std::vector<std::string> why;
    r->restore_files(idx, to, why);
    for (size_t j = 0; j < which.size(); ++j) {
      const size_t k = which[j];
      const CatalogEntry& e = *es[k];
      if (!why[j].empty()) {
        errs[k] = "base (container " + e.container + "): " + why[j];
        all = false;
        continue;
      }
      // The manifest's effective size wins when it is larger (materialize_entry).
      if (r->files()[e.file_index].size < e.size &&
          ::ftruncate(fds[k], static_cast<off_t>(e.size)) != 0) {
        errs[k] = "cannot set the size of '" + e.path + "': " + strerror(errno);
        all = false;
      }
    }
  }
  for (size_t k : alone)
    if (!materialize_entry(*es[k], containers, fds[k], &errs[k], true)) all = false;
  return all;
}

bool materialize_entry(const std::string& store_dir, const CatalogEntry& e, int fd,
                       std::string* err) {
  std::map<std::string, std::unique_ptr<ContainerReader>> open;
  ContainerSource source = [&](const std::string& name, std::string* why) -> ContainerReader* {
    if (!is_plain_container_name(name)) {
      if (why)
        *why = "the MANIFEST names an invalid container '" + name + "' (not a file in the store " +
               store_dir + ")";
      return nullptr;
    }
    auto it = open.find(name);
    if (it != open.end()) return it->second.get();
    auto r = std::make_unique<ContainerReader>();
    if (!r->open(store_dir + "/" + name, why)) return nullptr;
    return open.emplace(name, std::move(r)).first->second.get();
  };
  return materialize_entry(e, source, fd, err);
}

}  // namespace ckptfwd
