// The batcher thread: seals closed versions into batches (one store per batch) and runs
// each through the pipeline and the committer, retrying with backoff when the store fails.
//
// Batches follow checkpoint waves (waves.h): the files of one checkpoint step of the
// node's ranks go into one batch, so the data-aware merge sees them together. A wave of a
// store is due when
//   - it has all the files it is expected to have (as many as its family's previous wave)
//     with none of its pattern still open, and no version was closed for
//     Config.batch_window_ms (quiet), or
//   - no member joined it for Config.wave_window_ms (at least the batch window), or
//   - its oldest closed version is max(10 batch windows + 1 s, 4 wave windows) old
//     (steady streams still commit), or
//   - a batch took part of it before (its rest, or a retry after a failed commit).
// A version an fsync waits for is sealed at once, in a batch of the fsync'd versions
// only (no batch window, no quiet wait, no other file to compress before it returns).
// A batch of a store is sealed with its due waves, or with all its waves when
//   - someone waits (SYNC, WAITALL, DRAIN) and it was quiet for ~20 ms with no other file
//     of the store opened within the batch window still being written (or the oldest
//     closed version waits for 100 ms already): waiters never wait for a wave, or
//   - its closed bytes reach Config.batch_bytes, or
//   - the forwarder drains for exit.
// Two batches may be in flight, one per lane: the bulk lane takes any batch, the sync
// lane only a batch an fsync waits for, so an fsync never waits for the compression and
// commit of a batch of closed files; its tasks also go ahead of that batch's on the
// compression workers (WorkerPool::UrgentScope). A version is not sealed while an older
// version of its path is in a batch in flight: the commit of the newer one must come last.
// Garbage collection (gc.h) waits until no batch is in flight: a batch may refer to chunks
// of containers it would delete (chunk_index.h).
// Whole waves go in while they fit in Config.batch_bytes; only a wave bigger than that is
// cut (a split, counted in Stats::waves_split). Config.group_size does not bound a batch:
// it is how many ranks the pipeline merges together.
#pragma once
#include <array>
#include <chrono>
#include <condition_variable>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "forwarder/batching/loop_chores.h"
#include "forwarder/batching/waves.h"
#include "forwarder/core.h"
#include "forwarder/pipeline/pipeline.h"
#include "forwarder/state/state.h"

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
  // chores: what the loop asks of the verbs between batches (loop_chores.h).
  Batcher(Core& core, LoopChores& chores, BatcherTiming timing = {})
      : c_(core), chores_(chores), t_(std::move(timing)) {}
  ~Batcher() { stop(); }
  void start();
  // Finishes the batches in flight, then returns.
  void stop();

 private:
  void loop();
  // State lock held: a batch to write now (versions marked kCommitting; *synced when it
  // is one an fsync waits for), else false and *wake set to when to look again. Without
  // bulk_allowed, only a batch an fsync waits for.
  bool pick(std::string& store, std::vector<BatchFile>& files, Clock::time_point* wake,
            bool bulk_allowed, bool* synced);
  // A batch of the closed versions an fsync waits for (Version::sync_waiters), of the
  // first store in `order` that has any: sealed at once, alone, unless another fsync's
  // snapshot of that store is still being made (a copy of a large file) or a file of the
  // first one's checkpoint wave is still being written and not fsync'd yet (another
  // rank's): then, for at most kSyncGather after the first was ready, the batch waits
  // for them, so that ranks fsyncing together share one container instead of queueing
  // one batch each. False if
  // none waits (or none is due yet: *wake then says when, and *gathering has the stores
  // that wait, which no other batch may take meanwhile).
  bool pick_synced(std::map<std::string, std::vector<Version*>>& groups,
                   const std::vector<std::pair<uint64_t, const std::string*>>& order,
                   std::string& store, std::vector<BatchFile>& files, Clock::time_point* wake,
                   std::set<std::string>* gathering);
  // v as a member of the batch being sealed (marked kCommitting).
  BatchFile take(Version& v);
  // A batch took members of wave (all of its closed ones when whole): sealed, counted.
  void seal_wave(uint64_t wave, bool whole);
  void process(const std::string& store, std::vector<BatchFile> files);

  // A thread that writes the batches the batcher hands it, one at a time.
  struct Lane {
    std::thread th;
    bool busy = false;  // a batch is assigned and not done yet (under the state lock)
    std::string store;
    std::vector<BatchFile> files;
  };
  enum LaneId { kBulkLane, kSyncLane, kLanes };
  void lane_loop(Lane& lane);
  bool lanes_busy() const { return lanes_[kBulkLane].busy || lanes_[kSyncLane].busy; }

  // Shortest time between two picks that found nothing to seal (loop()), and at least
  // this many times as long as the look itself took.
  static constexpr std::chrono::milliseconds kPickGap{2};
  static constexpr int kIdleLookRatio = 4;
  // Longest wait of a synced batch for the fsync snapshots still being made (pick_synced).
  static constexpr std::chrono::milliseconds kSyncGather{100};

  Core& c_;
  LoopChores& chores_;
  BatcherTiming t_;
  std::thread th_;
  std::array<Lane, kLanes> lanes_;
  Waves waves_;  // checkpoint waves of the closed versions; under the state lock
  std::condition_variable lane_cv_;  // a lane got a batch, or stop_; with the state lock
  bool stop_ = false;                // under the state lock
};

}  // namespace ckptfwd::fwd
