// Which chunks of a batch are encoded, so that the in-place checks may walk a file while
// later chunks are still being encoded (in_place.h, in_place_rehash.h).
//
// The checks of a file committed in place hash each chunk at its encoding, then walk the
// file for its whole-file hash, then hash each chunk once more; the three must come in
// that order for each chunk, or the walk's hash could describe bytes other than the
// encoded ones. They need not wait for the batch's last chunk: a walk may read a piece as
// soon as every chunk holding it was encoded. Walking behind the encoders instead of
// after them takes that walk (one serial pass over the file) and most second hashes off
// the time an fsync waits once the last chunk is written.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "forwarder/pipeline/recheck_gate.h"

namespace ckptfwd::fwd {

class EncodeFront {
 public:
  // streams: how each stream is cut into chunks (RecheckGate::StreamChunks); chunks: their
  // number in the batch.
  EncodeFront(std::vector<RecheckGate::StreamChunks> streams, size_t chunks);

  // Chunk j was encoded (any thread; more than once is harmless).
  void encoded(size_t j);
  // Whether every chunk was encoded.
  bool all_encoded() const;
  // Waits until every chunk holding bytes [off, off+n) of stream s was encoded: true; or,
  // one of them not encoded, until abandon(): false.
  bool wait(uint32_t s, uint64_t off, uint64_t n);
  // Waits until every chunk was encoded: true; or, one not encoded, until abandon(): false.
  bool wait_all();
  // The chunks will not all be encoded (the batch failed): every wait returns false.
  void abandon();

 private:
  const std::vector<RecheckGate::StreamChunks> streams_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<char> done_;
  size_t left_;
  bool abandoned_ = false;
};

}  // namespace ckptfwd::fwd
