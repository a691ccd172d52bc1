// The batcher thread: seals closed versions into batches (one store per batch) and runs
// each through the pipeline and the committer, retrying with backoff when the store fails.
//
// A batch of a store is sealed when
//   - no version was closed for Config.batch_window_ms (quiet), or
//   - someone waits (SYNC, WAITALL, DRAIN) and it was quiet for ~20 ms with no other file
//     of the store opened within the window still being written (or the oldest closed
//     version waits for 100 ms already), or
//   - its bytes reach Config.batch_bytes or its files Config.group_size, or
//   - the oldest closed version is 10 windows + 1 s old (steady streams still commit), or
//   - the forwarder drains for exit.
#pragma once
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "forwarder/core.h"
#include "forwarder/pipeline.h"

namespace ckptfwd::fwd {

struct BatcherTiming {
  std::vector<std::chrono::milliseconds> retry_delays{std::chrono::milliseconds(200),
                                                      std::chrono::milliseconds(1000),
                                                      std::chrono::milliseconds(3000)};
  std::chrono::milliseconds failed_retry{30000};  // next attempt after a failed batch
  std::chrono::milliseconds waiter_quiet{20};
  std::chrono::milliseconds retire_grace{2000};  // see State::retire_grace
  std::chrono::milliseconds view_grace{10000};   // see State::view_grace
};

class Batcher {
 public:
  Batcher(Core& core, BatcherTiming timing = {}) : c_(core), t_(std::move(timing)) {}
  ~Batcher() { stop(); }
  void start();
  // Finishes the batch in flight, then returns.
  void stop();

 private:
  void loop();
  // State lock held: a batch to write now (versions marked kCommitting), else false and
  // *wake set to when to look again.
  bool pick(std::string& store, std::vector<BatchFile>& files, Clock::time_point* wake);
  void process(const std::string& store, std::vector<BatchFile> files);

  Core& c_;
  BatcherTiming t_;
  std::thread th_;
  bool stop_ = false;  // under the state lock
};

}  // namespace ckptfwd::fwd
