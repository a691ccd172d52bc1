#include "forwarder/commit/manifest_turn.h"

#include <algorithm>

namespace ckptfwd::fwd {

ManifestTurn::ManifestTurn(State& s, std::unique_lock<std::mutex>& lk,
                           std::vector<std::string> stores)
    : s_(s), stores_(std::move(stores)) {
  std::sort(stores_.begin(), stores_.end());
  stores_.erase(std::unique(stores_.begin(), stores_.end()), stores_.end());
  auto busy = [&] {
    for (const std::string& st : stores_)
      if (s_.manifest_busy.count(st)) return true;
    return false;
  };
  s_.manifest_cv.wait(lk, [&] { return !busy(); });
  for (const std::string& st : stores_) {
    s_.manifest_busy.insert(st);
    s_.catalogs.freeze(st, true);
  }
}

ManifestTurn::~ManifestTurn() {
  for (const std::string& st : stores_) {
    s_.manifest_busy.erase(st);
    s_.catalogs.freeze(st, false);
  }
  s_.manifest_cv.notify_all();
}

}  // namespace ckptfwd::fwd
