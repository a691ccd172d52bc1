#include "file_versions.h"

#include <algorithm>

namespace ckptfwd::cli {

namespace {
bool selected(const std::string& path, const std::vector<std::string>& wanted) {
  for (const std::string& w : wanted)
    if (path == w || path.rfind(w == "/" ? w : w + "/", 0) == 0) return true;
  return false;
}
}  // namespace

std::map<std::string, std::vector<FileVersion>> file_versions(
    const Store& st, const std::vector<std::string>& wanted) {
  std::map<std::string, std::vector<FileVersion>> out;
  const auto& history = st.catalog.history();
  auto add = [&](const std::string& path) {
    if (out.count(path)) return;
    std::vector<FileVersion>& v = out[path];
    const CatalogEntry* live = st.catalog.find(path);
    if (live) v.push_back({0, live});
    if (auto h = history.find(path); h != history.end()) {
      int n = 1;
      for (auto it = h->second.rbegin(); it != h->second.rend(); ++it) v.push_back({n++, &*it});
    }
  };
  for (const auto& [path, e] : st.catalog.entries())
    if (wanted.empty() ? history.count(path) > 0 : selected(path, wanted)) add(path);
  for (const auto& [path, versions] : history)
    if (wanted.empty() || selected(path, wanted)) add(path);
  return out;
}

std::vector<std::string> paths_without_versions(
    const std::map<std::string, std::vector<FileVersion>>& versions,
    const std::vector<std::string>& wanted) {
  std::vector<std::string> out;
  for (const std::string& w : wanted)
    if (std::none_of(versions.begin(), versions.end(),
                     [&](const auto& kv) { return selected(kv.first, {w}); }))
      out.push_back(w);
  return out;
}

}  // namespace ckptfwd::cli
