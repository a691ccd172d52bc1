// CKPTFWD_KEEP: the containers of a store that hold nothing the catalog still needs (the
// live files and the newest KEEP-1 superseded versions of each path) are deleted, after
// manifest `drop` records. Commits, renames and unlinks mark their store due; the batcher
// collects when it has nothing to commit, so the work stays off the application's path
// and one pass covers a whole checkpoint wave.
#pragma once
#include <mutex>
#include <string>

#include "forwarder/commit/commit_context.h"

namespace ckptfwd::fwd {

// Lock held. No-op when cfg.keep is 0 (keep every version).
void gc_due(const CommitContext& c, const std::string& store);
// Collects every due store. Called with lk held; releases it around the file work and then
// returns true (the caller's view of the state is stale).
bool collect_due_garbage(const CommitContext& c, std::unique_lock<std::mutex>& lk);

}  // namespace ckptfwd::fwd
