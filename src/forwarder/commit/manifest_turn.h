// A thread's turn at a store's MANIFEST, held across an append made WITHOUT the state lock.
//
// The committer writes a batch's records (write + fdatasync, milliseconds on a disk) with
// the state lock released, so that clients' verbs are not stalled behind the store. The
// records name the versions' paths as they were when the turn was taken; the verbs that
// would change what such a record means (RENAME, UNLINK, CHMOD, ABANDON: names, drops,
// modes) take the turn of their store first, so they wait for the records in flight and
// act on the state those records left. While a turn is held, the store's cached catalog
// is not reloaded (CatalogCache::freeze): a record on disk but not yet durable is never
// visible to readers, and a version shows as committed only once its record is durable.
//
// Turns are taken under the state lock and waited for on State::manifest_cv (the lock
// released while waiting), so there is no second mutex and no lock order to keep.
#pragma once
#include <mutex>
#include <string>
#include <vector>

#include "forwarder/state/state.h"

namespace ckptfwd::fwd {

class ManifestTurn {
 public:
  // lk holds s.mu (and holds it again on return). Waits until no other thread has a turn
  // at any of stores, then takes all of them at once.
  ManifestTurn(State& s, std::unique_lock<std::mutex>& lk, std::vector<std::string> stores);
  // Gives the turns back; s.mu must be held (by lk).
  ~ManifestTurn();
  ManifestTurn(const ManifestTurn&) = delete;
  ManifestTurn& operator=(const ManifestTurn&) = delete;

 private:
  State& s_;
  std::vector<std::string> stores_;
};

}  // namespace ckptfwd::fwd
