// The leader's table of a job's paths written from more than one node: which node owns
// each path (the first that claimed it for writing in this job), and where its forwarder
// listens. The owner is the one forwarder that commits the path; other nodes' writers
// hand their bytes to it (group.h). Soft state: a new leader rebuilds it from what the
// members tell it they own (adopt).
//
// A node that leaves cleanly (everything it staged is on the store) frees its paths. A
// node whose forwarder died may have taken closed, uncommitted versions with it: its
// paths stay its own and are answered "died" until its next forwarder (which recovers
// them from its staging directory) joins again, or until a limit, after which they are
// free and a reader gets what the store holds. So nobody reads a dead node's path from
// the store while its newer bytes may still come back. A leader that died took its table
// with it, and the paths its own node owned: a new leader answers "died" for every path
// it does not know, in the same way, until the old leader's node joins again (and so for
// the dead nodes a leader that left cleanly names).
#pragma once
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace ckptfwd::fwd::group {

class OwnerTable {
 public:
  using Clock = std::chrono::steady_clock;
  struct Answer {
    const std::string* owner = nullptr;  // nullptr: nobody owns it
    bool died = false;                   // its owner died: ask again later
  };
  // path's owner for a claim by `node`: the node that claimed it first, or `node` if
  // nobody owns it yet. Nobody claims a path of a node that died.
  Answer claim(const std::string& path, const std::string& node, Clock::time_point now);
  // path's owner for a read.
  Answer find(const std::string& path, Clock::time_point now);
  // path becomes node's whoever owned it (a rename onto path replaces the file: the node
  // that renames commits the new one). *previous: the node that owned it before, "" for
  // nobody or node itself; it must drop its versions of path. False (nothing changed)
  // while path's owner died: ask again later, as for a claim.
  bool take(const std::string& path, const std::string& node, Clock::time_point now,
            std::string* previous);
  // Whether some node owns path (dead or alive): what a new leader waits for from the
  // members' adopts.
  bool known(const std::string& path) const { return owner_.count(path) > 0; }
  // A member's path after a leader change: claimed for it unless another node owns it.
  // False when another node does (two nodes believed they owned path).
  bool adopt(const std::string& path, const std::string& node);
  // node left the group cleanly: its paths are free. Returns how many it owned.
  size_t drop_node(const std::string& node);
  // node's forwarder died: its paths are "died" until revive(node) or `until`.
  void mark_died(const std::string& node, Clock::time_point until);
  // The paths nobody owns are "died" until revive(node) or `until` (a dead leader's node).
  void suspect_unknown(const std::string& node, Clock::time_point until);
  // node's forwarder joined (again) and told what it owns: its paths are its own again.
  void revive(const std::string& node);
  // The live nodes other than `except` that own a path starting with prefix (a directory
  // listing asks them for the names of their files there that are not on the store yet).
  std::vector<std::string> nodes_under(const std::string& prefix, const std::string& except) const;
  // The nodes that died (or are suspected) and have not come back, as of now.
  std::vector<std::string> dead_nodes(Clock::time_point now);
  size_t size() const { return owner_.size(); }

 private:
  // Whether node is dead now; a death older than its limit frees the node's paths.
  bool dead(const std::string& node, Clock::time_point now);
  bool suspecting(Clock::time_point now);
  std::unordered_map<std::string, std::string> owner_;  // path -> node
  std::map<std::string, std::set<std::string>> paths_;  // node -> paths (sorted: by directory)
  std::map<std::string, Clock::time_point> died_;       // node -> limit
  std::map<std::string, Clock::time_point> suspects_;   // dead leaders' nodes -> limit
};

}  // namespace ckptfwd::fwd::group
