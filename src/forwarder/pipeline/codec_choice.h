// The codec chain of each variable, chosen once by trial on a sample of its bytes and
// remembered for the job (the forwarder lives as long as the job), so later checkpoints of
// the same variable skip the trial; and across jobs in each store's CHAINS file
// (chain_memory.h), so a job's first checkpoint skips the trials an earlier job on the
// store ran. Keyed by variable key, dtype, inner dimensions and lossy bound: a variable
// whose shape changes is tried again. The speeds the trials measure are pooled for the job
// (codec/chain/chain_speeds.h).
#pragma once
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codec/chain/chain_speeds.h"
#include "codec/chain/typed.h"
#include "forwarder/pipeline/merge_plan.h"

namespace ckptfwd::fwd {

class CodecChoices {
 public:
  // The chain for stream s: cached, or tried on a sample of at most opt.max_sample bytes
  // from the middle of the stream (whole rows where the layout has them).
  codec::Chain choose(const PlannedStream& s, const codec::SelectOptions& opt);
  // The chain chosen for stream s's variable before, if any (no trial).
  std::optional<codec::Chain> chosen(const PlannedStream& s, const codec::SelectOptions& opt) const;
  // For stream s, whose full trial waits: the chain of a quick trial on one block of
  // about block_bytes of its sample (SelectOptions::quick_block). Not cached: the full
  // trial decides for later batches.
  codec::Chain quick(const PlannedStream& s, const codec::SelectOptions& opt, size_t block_bytes);
  // Stream s's trial did not run before its batch (an fsync could not wait, or the batch's
  // trial budget was spent: trial_budget.h): a copy of its sample is kept for
  // run_deferred(), so that later checkpoints of the variable get the tuned chain. At most
  // kMaxDeferredBytes of samples are kept; a stream beyond them is tried when next seen.
  // Of several streams of one variable (the same key: its pieces in several merge
  // groups), the largest one's sample is kept, the same whatever order they come in.
  static constexpr uint64_t kMaxDeferredBytes = 64 << 20;
  void defer(const PlannedStream& s, const codec::SelectOptions& opt);
  // Runs the trials defer() kept, on the caller's thread (the batcher's, after a commit),
  // largest stream first, until their samples add up to max_bytes (the rest stay kept).
  // True if it ran any.
  bool run_deferred(uint64_t max_bytes = UINT64_MAX);
  size_t size() const;

  // The lossless chains store/CHAINS remembers from earlier jobs, taken once per store
  // (the chains this job chose win over them); the number taken.
  size_t recall(const std::string& store);
  // Writes this job's lossless chains and the ones recalled to store/CHAINS, when some
  // were chosen since the last write there. False with *err when the write failed.
  bool remember(const std::string& store, std::string* err);

 private:
  struct Deferred {
    std::string key;
    uint64_t stream_bytes = 0;  // of the stream the sample is from
    codec::Layout layout;
    std::vector<uint8_t> sample;
    codec::SelectOptions opt;
  };
  // opt with this job's chain speeds (every trial of the job notes and reads them).
  codec::SelectOptions with_speeds(const codec::SelectOptions& opt);
  // Under mu_: forgets key's deferred sample, if any, and its bytes.
  void drop_deferred(const std::string& key);

  codec::ChainSpeeds speeds_;
  mutable std::mutex mu_;
  std::mutex save_mu_;  // one remember() at a time: an older list never lands after a newer
  std::map<std::string, codec::Chain> chosen_;
  std::map<std::string, Deferred> deferred_;
  uint64_t deferred_bytes_ = 0;                  // of the samples in deferred_
  uint64_t tried_ = 0;                           // trials run (chains chosen by this job)
  std::map<std::string, uint64_t> store_tried_;  // per store: tried_ at its last write
  std::set<std::string> recalled_;               // stores whose CHAINS were read
};

}  // namespace ckptfwd::fwd
