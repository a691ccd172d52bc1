// The bytes of fsync snapshots read into the forwarder's private memory (BatchFile.live,
// pipeline.h) by all the batches in flight at once (two may be: batcher.h), held to
// Config.snapshot_read_max: a snapshot that does not fit is read in place instead
// (in_place.h), so the forwarder's memory does not grow with the number of ranks that
// fsync at once.
#pragma once
#include <atomic>
#include <cstdint>

namespace ckptfwd::fwd {

class SnapshotReadBudget {
 public:
  explicit SnapshotReadBudget(uint64_t max) : max_(max) {}
  ~SnapshotReadBudget();  // gives back what take() took
  SnapshotReadBudget(const SnapshotReadBudget&) = delete;
  SnapshotReadBudget& operator=(const SnapshotReadBudget&) = delete;

  // n bytes of the forwarder's budget for this batch; false (nothing taken) when they do
  // not fit beside what the batches in flight hold.
  bool take(uint64_t n);
  // Bytes the batches in flight hold now (tests).
  static uint64_t in_use() { return in_use_.load(); }

 private:
  const uint64_t max_;
  uint64_t taken_ = 0;
  static std::atomic<uint64_t> in_use_;
};

}  // namespace ckptfwd::fwd
