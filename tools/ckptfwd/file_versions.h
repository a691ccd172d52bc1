// The versions of a store's files that its containers still hold: for each path, its live
// version and the ones it replaced (what a commit, a rename onto it or its unlink
// superseded, as the MANIFEST says; containers CKPTFWD_KEEP or prune dropped hold none
// any more). Numbered back from the newest: 0 the live version, 1 the one it replaced, and
// so on; a path deleted since has no version 0. `ckptfwd ls --versions` lists them and
// `ckptfwd restore --version N` gives one back.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "store.h"

namespace ckptfwd::cli {

struct FileVersion {
  int number = 0;  // 0: live; N: N versions back
  const CatalogEntry* entry = nullptr;
};

// The Store must be opened with its history (open_store(..., true)). wanted: paths, each
// selecting itself and the paths below it; none: every path with more than its live
// version. Newest first per path.
std::map<std::string, std::vector<FileVersion>> file_versions(
    const Store& st, const std::vector<std::string>& wanted);

// The wanted paths that select no path of versions (file_versions' result): named by the
// commands as having no version in the store.
std::vector<std::string> paths_without_versions(
    const std::map<std::string, std::vector<FileVersion>>& versions,
    const std::vector<std::string>& wanted);

}  // namespace ckptfwd::cli
