// What kept containers refer to (see ref_keep.h).
#include "forwarder/commit/ref_keep.h"

#include <sys/stat.h>

#include <cerrno>

#include "store/container/container.h"

namespace ckptfwd::fwd {

bool RefKeep::spare_referenced(const std::string& store, const std::vector<std::string>& all,
                               std::vector<std::string>& garbage, std::string* err) {
  std::lock_guard<std::mutex> g(mu_);
  std::set<std::string> dead(garbage.begin(), garbage.end());
  std::vector<std::string> todo;
  for (const std::string& n : all)
    if (!dead.count(n)) todo.push_back(n);
  std::set<std::string> seen(todo.begin(), todo.end());
  while (!todo.empty()) {
    std::string name = todo.back();
    todo.pop_back();
    std::string path = store + "/" + name;
    auto it = refs_.find(path);
    if (it == refs_.end()) {
      std::set<std::string> names;
      struct stat st;
      if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) {
        // Nothing can be read through it: it keeps nothing alive (not cached: it may be
        // another node's container whose commit record is on its way).
      } else {
        ContainerReader r;
        std::string why;
        if (!r.open(path, &why) || !r.referenced_containers(names, &why)) {
          if (err) *err = "cannot read the references of " + path + ", which is kept: " + why;
          return false;
        }
        it = refs_.emplace(path, std::move(names)).first;
      }
    }
    if (it == refs_.end()) continue;
    for (const std::string& ref : it->second) {
      dead.erase(ref);
      if (seen.insert(ref).second) todo.push_back(ref);
    }
  }
  std::erase_if(garbage, [&](const std::string& n) { return !dead.count(n); });
  return true;
}

void RefKeep::forget(const std::string& store, const std::string& name) {
  std::lock_guard<std::mutex> g(mu_);
  refs_.erase(store + "/" + name);
}

}  // namespace ckptfwd::fwd
