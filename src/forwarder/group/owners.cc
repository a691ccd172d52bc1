#include "forwarder/group/owners.h"

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
  if (suspect_.empty()) return false;
  if (now < suspect_until_) return true;
  suspect_.clear();
  return false;
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
  suspect_ = node;
  suspect_until_ = until;
}

void OwnerTable::revive(const std::string& node) {
  died_.erase(node);
  if (suspect_ == node) suspect_.clear();
}

}  // namespace ckptfwd::fwd::group
