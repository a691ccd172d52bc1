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
  // pick's steps, state lock held:
  // The closed versions ready to seal, by store (groups), but none of a path that has a
  // version in a batch in flight (the newer commit must come last); failed versions whose
  // retry is due are closed again, and *wake is lowered to the others' retry times.
  // wave_open: the stores with a file opened within the batch window, never fsync'd and
  // still being written (a waiter gives its wave time to close or fsync too).
  void group_closed_versions(Clock::time_point now,
                             std::map<std::string, std::vector<Version*>>& groups,
                             std::map<std::string, bool>& wave_open, Clock::time_point* wake);
  // Sorts each store's versions in close order and puts the newly closed ones into their
  // checkpoint waves (in close order); open waves none of them is in are forgotten
  // (Waves::retain_open).
  // Returns the stores by their first close (the store whose oldest version closed first
  // goes first), pointing at the keys of groups.
  std::vector<std::pair<uint64_t, const std::string*>> join_waves(
      std::map<std::string, std::vector<Version*>>& groups);
  // The closed versions of one wave in a store.
  struct WavePart {
    uint64_t wave = 0;
    std::vector<Version*> vs;
    uint64_t bytes = 0;
    bool due = false;
  };
  // A bulk batch of one store's closed versions vs (in close order) into files: its due
  // waves, or all of them when the store must go (draining, Config.batch_bytes reached,
  // or a waiter and quiet: see the top of this file). wave_open: the store's, as
  // group_closed_versions found. False with *wake lowered to when to look again when none
  // is due.
  bool pick_store(const std::vector<Version*>& vs, bool wave_open, Clock::time_point now,
                  std::vector<BatchFile>& files, Clock::time_point* wake);
  // Marks each part due or not (see the top of this file), lowering *wake to when one
  // that is not becomes due. True when any is.
  bool mark_due_waves(std::vector<WavePart>& parts, Clock::time_point now, Clock::time_point* wake);
  // Is a version still open that would join wave w (a rank still writing its file)?
  bool wave_member_open(const Waves::Wave& w);
  // Takes the parts (all, or only the due ones unless everything) into files in order,
  // whole waves while they fit in Config.batch_bytes: a wave that does not fit ends the
  // batch, unless it comes first (then it is cut after the versions that fit, at least
  // one). Each wave taken from is sealed.
  void take_wave_parts(const std::vector<WavePart>& parts, bool everything,
                       std::vector<BatchFile>& files);
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
  // pick_synced's steps, state lock held:
  // Is a snapshot of store still being made, or a file of first's checkpoint wave still
  // being written and not fsync'd yet, or a member of that wave not even opened yet?
  // (first: the store's first fsync'd version ready.)
  bool sync_peers_pending(const Version& first, const std::string& store);
  // Takes the versions of vs (one store's closed versions, in close order) an fsync waits
  // for into files (empty on entry), with the older closed versions of their paths; cut
  // at Config.batch_bytes only between checkpoint waves. Each wave taken from is sealed.
  void take_synced(const std::vector<Version*>& vs, std::vector<BatchFile>& files);
  // v as a member of the batch being sealed (marked kCommitting).
  BatchFile take(Version& v);
  // A batch took members of wave (all of its closed ones when whole): sealed, counted.
  void seal_wave(uint64_t wave, bool whole);
  // on_sync_lane: the lane an fsync's batch goes to, which runs only a few of the codec
  // trials batches deferred (kSyncLaneTrialBytes of samples), the bulk lane the rest.
  void process(const std::string& store, std::vector<BatchFile> files, bool on_sync_lane);
  static constexpr uint64_t kSyncLaneTrialBytes = 2 << 20;

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
  // Retired staged files due for deletion (State::purge_retired), kept while the
  // application writes: freeing a large file's pages competes with its own page
  // allocations (forwarder/util/yield_gate.h). Each a version's own name, never reused.
  std::vector<std::string> doomed_;
  std::condition_variable lane_cv_;  // a lane got a batch, or stop_; with the state lock
  bool stop_ = false;                // under the state lock
};

}  // namespace ckptfwd::fwd
