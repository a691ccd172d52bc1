// What the commit room (committer.h, gc.h) may touch of a forwarder, instead of all of it
// (core.h): the settings, the state (under State::mu, as each function says), the
// counters, the per-variable stats a commit adds to, and the two caches that name
// containers, which forget the ones the collector deletes. The daemon builds one from its
// Core (Core::commit_context); it holds references, so it lives no longer than they do.
#pragma once
#include "common/config.h"
#include "forwarder/commit/ref_keep.h"
#include "forwarder/pipeline/chunk_index.h"
#include "forwarder/pipeline/var_stats.h"
#include "forwarder/state/state.h"
#include "forwarder/state/stats.h"

namespace ckptfwd::fwd {

struct CommitContext {
  const Config& cfg;
  State& state;
  Stats& stats;
  VariableStats& var_stats;
  ChunkIndexCache& chunk_indexes;
  RefKeep& ref_keep;
};

}  // namespace ckptfwd::fwd
