#include "forwarder/group/owners.h"

#include <algorithm>

namespace ckptfwd::fwd::group {

bool OwnerTable::dead(const std::string& node, Clock::time_point now) {
  auto it = died_.find(node);
  if (it == died_.end()) return false;
  if (now < it->second) return true;
  died_.erase(it);  // its next forwarder never came: what the store holds is all there is
  drop_node(node);
  return false;
}

bool OwnerTable::suspecting(Clock::time_point now) {
  std::erase_if(suspects_, [now](const auto& s) { return now >= s.second; });
  return !suspects_.empty();
}

OwnerTable::Answer OwnerTable::claim(const std::string& path, const std::string& node,
                                     Clock::time_point now) {
  Answer a = find(path, now);
  if (a.owner || a.died) return a;
  auto [it, fresh] = owner_.try_emplace(path, node);
  if (fresh) paths_[node].insert(path);
  return {&it->second, false};
}

OwnerTable::Answer OwnerTable::find(const std::string& path, Clock::time_point now) {
  auto it = owner_.find(path);
  if (it == owner_.end()) return {nullptr, suspecting(now)};
  if (dead(it->second, now)) return {&it->second, true};
  it = owner_.find(path);  // a death past its limit freed it
  if (it == owner_.end()) return {nullptr, suspecting(now)};
  return {&it->second, false};
}

bool OwnerTable::take(const std::string& path, const std::string& node, Clock::time_point now,
                      std::string* previous) {
  previous->clear();
  Answer a = find(path, now);
  if (a.died) return false;
  if (a.owner && *a.owner != node) {
    *previous = *a.owner;
    paths_[*previous].erase(path);
  }
  owner_[path] = node;
  paths_[node].insert(path);
  return true;
}

bool OwnerTable::adopt(const std::string& path, const std::string& node) {
  auto [it, fresh] = owner_.try_emplace(path, node);
  if (fresh) paths_[node].insert(path);
  return it->second == node;
}

size_t OwnerTable::drop_node(const std::string& node) {
  auto it = paths_.find(node);
  if (it == paths_.end()) return 0;
  size_t n = it->second.size();
  for (const std::string& p : it->second) owner_.erase(p);
  paths_.erase(it);
  return n;
}

void OwnerTable::mark_died(const std::string& node, Clock::time_point until) {
  died_[node] = until;
}

void OwnerTable::suspect_unknown(const std::string& node, Clock::time_point until) {
  suspects_[node] = until;
}

void OwnerTable::revive(const std::string& node) {
  died_.erase(node);
  suspects_.erase(node);
}

std::vector<std::string> OwnerTable::nodes_under(const std::string& prefix,
                                                 const std::string& except) const {
  std::vector<std::string> out;
  for (const auto& [node, paths] : paths_) {
    if (node == except || died_.count(node)) continue;
    auto it = paths.lower_bound(prefix);
    if (it != paths.end() && it->compare(0, prefix.size(), prefix) == 0) out.push_back(node);
  }
  return out;
}

std::vector<std::string> OwnerTable::dead_nodes(Clock::time_point now) {
  suspecting(now);  // (drops expired suspects)
  std::vector<std::string> out;
  for (auto it = died_.begin(); it != died_.end();) {
    if (now >= it->second) {
      drop_node(it->first);
      it = died_.erase(it);
    } else {
      out.push_back((it++)->first);
    }
  }
  for (const auto& [node, until] : suspects_)
    if (std::find(out.begin(), out.end(), node) == out.end()) out.push_back(node);
  return out;
}

}  // namespace ckptfwd::fwd::group
