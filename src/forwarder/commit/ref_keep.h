// CKPTFWD_KEEP and reference chunks (store/container/chunk_ref.h): a container that a kept
// container refers to must stay, or the kept one could no longer be restored. The catalog knows
// nothing of references (MANIFEST records are unchanged by them), so the collector reads
// the references of the containers it keeps before it deletes anything.
#pragma once
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace ckptfwd::fwd {

class RefKeep {
 public:
  // all: every container of store the catalog names; garbage: those it no longer needs.
  // Removes from garbage every container a kept one refers to, and what those refer to in
  // turn (a container kept only for its chunks still passes `ckptfwd verify`). Each
  // container's references are read once (containers never change). False with *err when
  // the references of a container that stays cannot be read: nothing may be deleted then.
  // A kept container that is missing refers to nothing.
  bool spare_referenced(const std::string& store, const std::vector<std::string>& all,
                        std::vector<std::string>& garbage, std::string* err);
  void forget(const std::string& store, const std::string& name);

 private:
  std::mutex mu_;
  std::map<std::string, std::set<std::string>> refs_;  // store + "/" + name -> names
};

}  // namespace ckptfwd::fwd
