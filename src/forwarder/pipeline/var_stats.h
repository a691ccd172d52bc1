// Per variable key, what its typed streams made of it over the job: the codec chain, the
// bytes before and after encoding and the time the chain took. `ckptfwd stats --vars`
// asks the forwarder for it; at exit it goes to CKPTFWD_STATS_FILE as one JSON line per
// variable ({"source":"variable",...}), next to the counters.
#pragma once
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "forwarder/pipeline/pipeline.h"

namespace ckptfwd::fwd {

// Variables a STATS reply or the exit's stats lines list at most (the largest first).
inline constexpr size_t kStatsVarsMax = 256;

class VariableStats {
 public:
  // Adds the typed streams of a committed batch (byte streams are not variables).
  void add(const std::vector<StreamReport>& streams);
  // One flat JSON object per variable, the largest (bytes in) first, at most max:
  // {"source":"variable","key","dtype","chain","bytes_in","bytes_out","ratio","encode_mbs"}.
  std::vector<std::string> json_lines(size_t max) const;

 private:
  struct Entry {
    std::string dtype, chain;
    uint64_t in = 0, out = 0;
    int64_t ns = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Entry> vars_;
};

}  // namespace ckptfwd::fwd
