// Everything one forwarder instance owns, in one place (tests build one in-process).
#pragma once
#include <functional>
#include <string>

#include "common/config.h"
#include "store/direct_read.h"
#include "forwarder/pipeline/chunk_index.h"
#include "forwarder/pipeline/codec_choice.h"
#include "forwarder/state/fate_file.h"
#include "forwarder/pipeline/pipeline.h"
#include "forwarder/commit/ref_keep.h"
#include "forwarder/restore/restore.h"
#include "forwarder/state/state.h"
#include "forwarder/state/stats.h"
#include "forwarder/pipeline/var_stats.h"
#include "forwarder/restore/view_prefetch.h"
#include "forwarder/staging/warm_memory.h"
#include "forwarder/util/worker_pool.h"
#include "schema/infer.h"

namespace ckptfwd::fwd {

struct Core {
  Core(const Config& c, std::string dir, std::string node_name)
      : cfg(c),
        session_dir(std::move(dir)),
        node(std::move(node_name)),
        state(cfg, stats, session_dir),
        workers(cfg.writers),
        prefetch(state, stats, session_dir, cfg.prefetch_bytes, cfg.restore_threads) {
    // main() checked the settings with the same call before it got here; a Core built
    // elsewhere (tests) with bad ones infers without schemas rather than failing.
    std::string err;
    inferrer.configure(cfg, &err);
    set_restore_decode_threads(static_cast<unsigned>(cfg.restore_threads));
    set_direct_read_default(cfg.direct_read);
    warm::set_cap(cfg.snapshot_read_max);
  }
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  const Config cfg;
  const std::string session_dir;
  const std::string node;
  std::string job;  // this session's job (SessionPaths::job): close-to-open is per job
  Stats stats;
  State state;
  FateBook fates{session_dir};    // the paths' fates in the session dir (fate_file.h)
  schema::Inferrer inferrer;      // variable maps of sealed versions (pipeline.h)
  VariableStats var_stats;        // per variable: chain, bytes in/out, time (var_stats.h)
  CodecChoices codec_choices;     // codec chain per variable, kept for the job (codec_choice.h)
  ChunkIndexCache chunk_indexes;  // earlier chunks new ones may refer to (chunk_index.h)
  RefKeep ref_keep;               // what kept containers refer to (CKPTFWD_KEEP, ref_keep.h)
  WorkerPool workers;             // compression workers of every batch (worker_pool.h)
  // Tests: called by the committer and the name-space verbs (Service::append_unlocked)
  // just before each MANIFEST append, without the state lock (to observe that the lock is
  // free over the append and its fdatasync).
  std::function<void()> before_manifest_append;
  // Tests: called by the batcher with each batch it wrote to a container, before the
  // commit and without the state lock (to hold a batch in flight).
  std::function<void(const std::vector<BatchFile>&)> after_batch_written;
  // Tests: called by an fsync's snapshot between taking the staged file and linking or
  // copying it, without the state lock (to race a drop of the open version against it).
  std::function<void()> during_snapshot;
  // Tests: called by a SYNC (Service::hash_if_synced) or the batcher
  // (Service::settle_unchanged, after a CLOSE) after hashing a staged file to tell whether
  // it is unchanged since its last fsync, before the state lock is taken again (to race
  // requests against the hash).
  std::function<void()> during_synced_hash;
  // Tests: called by the pipeline with the staged path of each fsync snapshot it reads in
  // place (in_place.h), after encoding it and before checking that it did not change (to
  // change it then), without the state lock.
  std::function<void(const std::string&)> after_in_place_encode;
  // Last: its restore threads use state, so they stop first.
  ViewPrefetch prefetch;  // read views staged ahead of restart opens (view_prefetch.h)
};

}  // namespace ckptfwd::fwd
