// The leader's table of a job's paths written from more than one node: which node owns
// each path (the first that claimed it for writing in this job), and where its forwarder
// listens. The owner is the one forwarder that commits the path; other nodes' writers
// hand their bytes to it (group.h). Soft state: a new leader rebuilds it from what the
// members tell it they own (adopt), and a node that leaves frees its paths.
#pragma once
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace ckptfwd::fwd::group {

class OwnerTable {
 public:
  // path's owner: the node that claimed it first, or `node` if nobody owns it yet.
  const std::string& claim(const std::string& path, const std::string& node);
  // path's owner, or nullptr.
  const std::string* find(const std::string& path) const;
  // A member's path after a leader change: claimed for it unless another node owns it.
  // False when another node does (two nodes believed they owned path).
  bool adopt(const std::string& path, const std::string& node);
  // node left the group: its paths are free. Returns how many it owned.
  size_t drop_node(const std::string& node);
  size_t size() const { return owner_.size(); }

 private:
  std::unordered_map<std::string, std::string> owner_;                      // path -> node
  std::unordered_map<std::string, std::unordered_set<std::string>> paths_;  // node -> paths
};

}  // namespace ckptfwd::fwd::group
