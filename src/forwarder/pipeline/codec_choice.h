// The codec chain of each variable, chosen once by trial on a sample of its bytes and
// remembered for the job (the forwarder lives as long as the job), so later checkpoints of
// the same variable skip the trial. Keyed by variable key, dtype, inner dimensions and
// lossy bound: a variable whose shape changes is tried again.
#pragma once
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

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
  // An fsync could not wait for stream s's trial: a copy of its sample is kept for
  // run_deferred(), so that later checkpoints of the variable get the tuned chain.
  void defer(const PlannedStream& s, const codec::SelectOptions& opt);
  // Runs the trials defer() kept, on the caller's thread (the batcher's, after the commit
  // the fsync waited for). True if there were any.
  bool run_deferred();
  size_t size() const;

 private:
  struct Deferred {
    std::string key;
    codec::Layout layout;
    std::vector<uint8_t> sample;
    codec::SelectOptions opt;
  };
  mutable std::mutex mu_;
  std::map<std::string, codec::Chain> chosen_;
  std::map<std::string, Deferred> deferred_;
};

}  // namespace ckptfwd::fwd
