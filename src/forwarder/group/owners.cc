#include "forwarder/group/owners.h"

namespace ckptfwd::fwd::group {

const std::string& OwnerTable::claim(const std::string& path, const std::string& node) {
  auto [it, fresh] = owner_.try_emplace(path, node);
  if (fresh) paths_[node].insert(path);
  return it->second;
}

const std::string* OwnerTable::find(const std::string& path) const {
  auto it = owner_.find(path);
  return it == owner_.end() ? nullptr : &it->second;
}

bool OwnerTable::adopt(const std::string& path, const std::string& node) {
  return claim(path, node) == node;
}

size_t OwnerTable::drop_node(const std::string& node) {
  auto it = paths_.find(node);
  if (it == paths_.end()) return 0;
  size_t n = it->second.size();
  for (const std::string& p : it->second) owner_.erase(p);
  paths_.erase(it);
  return n;
}

}  // namespace ckptfwd::fwd::group
