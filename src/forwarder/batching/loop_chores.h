// What the batcher's loop runs between batches that belongs to the verbs (verbs/service.h
// implements it; the daemon hands its Service to the Batcher): the batcher never builds a
// Service nor knows the verbs, it asks through this narrow door.
#pragma once
#include <mutex>

#include "forwarder/state/state.h"

namespace ckptfwd::fwd {

class LoopChores {
 public:
  virtual ~LoopChores() = default;
  // State lock held through lk (released while hashing): every closed version left to
  // the batcher to hash (State::unchanged_checks) is settled (Service::settle_unchanged).
  virtual void settle_unchanged(std::unique_lock<std::mutex>& lk) = 0;
  // State lock held: the references of processes that are gone are released
  // (Service::reap_orphans). Returns when to look again; *closed_some: versions were
  // closed, which need a new pick.
  virtual Clock::time_point reap_orphans(bool* closed_some) = 0;
};

}  // namespace ckptfwd::fwd
