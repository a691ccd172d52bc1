// The last step of a batch: the manifest entry (with each file's CURRENT path; versions
// dropped meanwhile are left out), the cached catalog, and the release of the staged
// files; the state lock is held for the state, never over the manifest I/O. Or, when the store
// keeps failing, the failed state.
#pragma once
#include <mutex>
#include <string>
#include <vector>

#include "forwarder/commit/commit_context.h"
#include "forwarder/pipeline/pipeline.h"

namespace ckptfwd::fwd {

// lk holds the state lock; it is released while each record is appended and made
// durable (the store's manifest turn held meanwhile, manifest_turn.h), and held again on
// return. False with *err when the manifest append failed (the container is removed
// again; the versions stay kCommitting for the caller's retry).
bool commit_batch(const CommitContext& c, std::unique_lock<std::mutex>& lk,
                  const std::string& store, const std::vector<BatchFile>& files,
                  const BatchResult& res, std::string* err);
// State lock held. Marks the batch failed (waiters get EIO), keeps the staged files and
// schedules another attempt after `retry_after`.
void fail_batch(const CommitContext& c, const std::vector<BatchFile>& files,
                Clock::duration retry_after);

}  // namespace ckptfwd::fwd
