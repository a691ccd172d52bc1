// How fast each candidate chain has coded in the trials of a job, for the selector's speed
// floor.
//
// A trial's time only errs slow (a first call's fresh pages, a core the application's
// ranks share, a cache another thread emptied), and the candidates' speeds sit near the
// floor on a small machine, so one timing alone flips the choice between runs. The
// selector used to time every candidate below the floor again (twice more) in every
// stream's trial, which on a data set of many small variables was a quarter of the trial
// CPU. A chain's speed depends little on which variable it codes: so the best speed seen
// for the same plan on values of the same width, in any trial of the job, stands for it,
// and only a plan not seen before is timed again.
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
  // The best MB/s noted for the chain spec on values of elem bytes; 0 when none.
  double best(const std::vector<uint8_t>& spec, uint32_t elem) const {
    std::lock_guard<std::mutex> g(mu_);
    auto it = best_.find({spec, elem});
    return it == best_.end() ? 0 : it->second;
  }
  // Notes a trial's speed; returns the best so far (this one included).
  double note(const std::vector<uint8_t>& spec, uint32_t elem, double mbps) {
    std::lock_guard<std::mutex> g(mu_);
    double& b = best_[{spec, elem}];
    if (mbps > b) b = mbps;
    return b;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::vector<uint8_t>, uint32_t>, double> best_;
};

}  // namespace ckptfwd::codec
