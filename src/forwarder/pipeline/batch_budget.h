// Bytes that all the batches in flight at once (two may be: batcher.h) share one bound
// on: each batch takes its share for as long as it lives and gives it back when done, so
// what the forwarder holds does not grow with the number of batches side by side.
//   - snapshot_reads: fsync snapshots read into the forwarder's private memory
//     (BatchFile.live, pipeline.h), held to Config.snapshot_read_max; a snapshot that does
//     not fit is read in place instead (in_place.h);
//   - resident_batches: batches read without bounding their resident pages (pipeline.cc),
//     held to 128 MiB; a batch that does not fit gives its pages back as it goes.
#pragma once
#include <atomic>
#include <cstdint>

namespace ckptfwd::fwd {

class BatchBudget {
 public:
  // The bytes one pool of budgets holds now.
  using Pool = std::atomic<uint64_t>;
  static Pool snapshot_reads;
  static Pool resident_batches;

  BatchBudget(Pool& pool, uint64_t max) : pool_(pool), max_(max) {}
  ~BatchBudget();  // gives back what take() took
  BatchBudget(const BatchBudget&) = delete;
  BatchBudget& operator=(const BatchBudget&) = delete;

  // n bytes of the pool's budget for this batch; false (nothing taken) when they do not
  // fit beside what the batches in flight hold.
  bool take(uint64_t n);

 private:
  Pool& pool_;
  const uint64_t max_;
  uint64_t taken_ = 0;
};

}  // namespace ckptfwd::fwd
