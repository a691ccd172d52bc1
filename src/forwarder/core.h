// Everything one forwarder instance owns, in one place (tests build one in-process).
#pragma once
#include <string>

#include "common/config.h"
#include "forwarder/commit/commit_context.h"
#include "forwarder/commit/ref_keep.h"
#include "forwarder/pipeline/chunk_index.h"
#include "forwarder/pipeline/codec_choice.h"
#include "forwarder/pipeline/pipeline.h"
#include "forwarder/pipeline/var_stats.h"
#include "forwarder/restore/read_links.h"
#include "forwarder/restore/restore.h"
#include "forwarder/restore/view_prefetch.h"
#include "forwarder/staging/warm_memory.h"
#include "forwarder/state/early_start_check.h"
#include "forwarder/state/fate_file.h"
#include "forwarder/state/state.h"
#include "forwarder/state/stats.h"
#include "forwarder/util/worker_pool.h"
#include "forwarder/util/yield_gate.h"
#include "schema/infer.h"
#include "store/container/direct_read.h"

namespace ckptfwd::fwd {

struct Core {
  Core(const Config& c, std::string dir, std::string node_name)
      : cfg(c),
        session_dir(std::move(dir)),
        node(std::move(node_name)),
        state(cfg, stats, session_dir),
        gate(cfg.yield_ms, &stats.yield_ns),
        workers(cfg.writers),
        prefetch(state, stats, session_dir, cfg.prefetch_bytes, cfg.restore_threads) {
    // main() checked the settings with the same call before it got here; a Core built
    // elsewhere (tests) with bad ones infers without schemas rather than failing.
    std::string err;
    inferrer.configure(cfg, &err);
    set_restore_decode_threads(static_cast<unsigned>(cfg.restore_threads));
    set_direct_read_default(cfg.direct_read);
    warm::set_cap(cfg.snapshot_read_max);
    gate.set_demand([this] { return state.waiters > 0 || state.draining || state.shutdown; });
    workers.set_gate(&gate);
    workers.set_bulk_nice(cfg.bulk_nice);
    // A prefetched view answers a read of its path as a read open would: no version of
    // this node (not even one being made), no MANIFEST turn of this forwarder under way,
    // no record of the path cut off the MANIFEST, no close on another node not on the
    // store yet (called under state.mu; the plan left out the paths with a fate file).
    prefetch.set_read_links(&links, [this](const std::string& store, const std::string& path) {
      return !state.has_version(path) && !state.manifest_busy.count(store) &&
             !state.catalogs.lost_version(store, path) &&
             !state.pending.pending_elsewhere(store, path);
    });
    state.set_view_released([this](const std::string& view) { links.drop(view); });
  }
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  // The part of this forwarder the commit room works on (commit_context.h).
  CommitContext commit_context() { return {cfg, state, stats, var_stats, chunk_indexes, ref_keep}; }

  const Config cfg;
  const std::string session_dir;
  const std::string node;
  std::string job;  // this session's job (SessionPaths::job): close-to-open is per job
  Stats stats;
  State state;
  FateBook fates{session_dir};  // the paths' fates in the session dir (fate_file.h)
  EarlyStartCheck
      early_start;  // a forwarder started early: its clients' settings (early_start_check.h)
  schema::Inferrer inferrer;      // variable maps of sealed versions (pipeline.h)
  VariableStats var_stats;        // per variable: chain, bytes in/out, time (var_stats.h)
  CodecChoices codec_choices;     // codec chain per variable, kept for the job (codec_choice.h)
  ChunkIndexCache chunk_indexes;  // earlier chunks new ones may refer to (chunk_index.h)
  RefKeep ref_keep;               // what kept containers refer to (CKPTFWD_KEEP, ref_keep.h)
  YieldGate gate;                 // bulk work waits while the application writes (yield_gate.h)
  WorkerPool workers;             // compression workers of every batch (worker_pool.h)
  ReadLinks links{session_dir, &stats.read_links};  // reads without a request (read_links.h)
  // Last: its restore threads use state, so they stop first.
  ViewPrefetch prefetch;  // read views staged ahead of restart opens (view_prefetch.h)
};

}  // namespace ckptfwd::fwd
