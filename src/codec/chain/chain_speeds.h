// How fast each candidate chain has coded in the trials of a job, for the selector's speed
// floor.
//
// A trial's time mostly errs slow (a first call's fresh pages, a core the application's
// ranks share, a cache another thread emptied), and the candidates' speeds sit near the
// floor on a small machine, so one timing alone flips the choice between runs. The
// selector used to time every candidate below the floor again (twice more) in every
// stream's trial, which on a data set of many small variables was a quarter of the trial
// CPU. A chain's speed depends on the data only within limits, so the job's trials pool
// what they measured per plan and width: a candidate's speed may rise to the best its plan
// reached in the job, at most to twice its own timing (zstd codes a constant field many
// times faster than a noisy one, and the floor must still hold for the noisy one), and a
// plan timed often enough (selector.cc: kKnownTimings) is not timed again.
//
// Thread-safe: the trials of a batch run on the worker pool.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace ckptfwd::codec {

class ChainSpeeds {
 public:
  struct Seen {
    double best = 0;  // MB/s, the best timing noted
    int timings = 0;  // timings noted
  };
  // What was noted for the chain spec on values of elem bytes.
  Seen seen(const std::vector<uint8_t>& spec, uint32_t elem) const {
    std::lock_guard<std::mutex> g(mu_);
    auto it = seen_.find({spec, elem});
    return it == seen_.end() ? Seen{} : it->second;
  }
  // Notes one timing; returns what is known now, this one included.
  Seen note(const std::vector<uint8_t>& spec, uint32_t elem, double mbps) {
    std::lock_guard<std::mutex> g(mu_);
    Seen& s = seen_[{spec, elem}];
    if (mbps > s.best) s.best = mbps;
    ++s.timings;
    return s;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::vector<uint8_t>, uint32_t>, Seen> seen_;
};

}  // namespace ckptfwd::codec
