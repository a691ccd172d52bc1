// When each chunk of a batch read in place may be hashed the second time (in_place.h).
//
// The checks of a file committed in place need, for every chunk holding its bytes, the
// chunk's hash at encoding, then the whole-file hash of what a restore gives back (a walk
// of the file in order), then the chunk's hash once more: equal to the first, the bytes
// did not change between the encoding and the walk, so the walk's hash speaks for what
// was encoded. The walk is one serial hash pass a file; the second hashes are not, and a
// chunk's may run as soon as the walks have read every byte of it they read, on the
// workers the walks leave idle, instead of after the last walk. The gate counts those
// bytes per chunk and tells which chunk a walked piece completed.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace ckptfwd::fwd {

class RecheckGate {
 public:
  // How a stream is cut into chunks: the index of its first chunk in the batch's chunk
  // list, and the length of each of its chunks but the last (which may be shorter).
  struct StreamChunks {
    size_t first = 0;
    uint64_t chunk_len = 0;
  };
  RecheckGate(std::vector<StreamChunks> streams, size_t chunks);

  // Before any walk: a walk will read bytes [off, off+n) of stream s (once per call).
  void expect(uint32_t stream, uint64_t off, uint64_t n);
  // Whether chunk j waits for no walk (after every expect()).
  bool open(size_t j) const { return pending_[j].load(std::memory_order_acquire) == 0; }
  // A walk read bytes [off, off+n) of stream s: on_open(j) for each chunk this was the
  // last expected byte of (exactly once per chunk, whichever walk reads it last).
  template <class Fn>
  void passed(uint32_t stream, uint64_t off, uint64_t n, Fn&& on_open) {
    for_chunks(stream, off, n, [&](size_t j, uint64_t bytes) {
      if (pending_[j].fetch_sub(bytes, std::memory_order_acq_rel) == bytes) on_open(j);
    });
  }

 private:
  // fn(chunk, bytes of [off, off+n) in it) for each chunk of stream s the range touches.
  template <class Fn>
  void for_chunks(uint32_t stream, uint64_t off, uint64_t n, Fn&& fn) const {
    const StreamChunks& sc = streams_[stream];
    if (sc.chunk_len == 0) return;  // a stream without chunks has no bytes
    for (uint64_t end = off + n; off < end;) {
      const uint64_t k = off / sc.chunk_len, chunk_end = (k + 1) * sc.chunk_len;
      const uint64_t take = std::min(end, chunk_end) - off;
      fn(sc.first + k, take);
      off += take;
    }
  }

  std::vector<StreamChunks> streams_;
  std::unique_ptr<std::atomic<uint64_t>[]> pending_;  // walked bytes each chunk waits for
};

}  // namespace ckptfwd::fwd
