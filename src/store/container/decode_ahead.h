// Decoding the chunks of one file restore ahead of the walk that writes them out.
//
// A restore walks a file's ranges in order and needs each chunk decoded before it can
// write the chunk's bytes; decoding (decompression and the inverse typed transforms) is
// most of the cost, and one thread decodes at about 1 GB/s. DecodeAhead lets helper
// threads decode the chunks the walk will need next, in the order it will need them, so
// a restore of one large file uses several cores while the walk itself stays in order
// (one writer of the output, one running file hash).
//
// Bounded: a helper decodes chunk k only while k < (chunks the walk has taken) + window,
// so at most `window` decoded chunks wait for the walk, whatever the file's size.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/uninit_bytes.h"

namespace ckptfwd {

class DecodeAhead {
 public:
  using Bytes = std::shared_ptr<const UninitBytes>;
  // Decodes the k-th chunk in walk order; null with *err set on failure. Called from the
  // helpers and from the walking thread, concurrently for different k.
  using Decode = std::function<Bytes(size_t k, std::string* err)>;

  // n chunks in walk order, `helpers` threads besides the walking one (0: none are
  // started and take() decodes each chunk itself), at most `window` decoded ahead.
  DecodeAhead(size_t n, unsigned helpers, size_t window, Decode decode);
  // Stops the helpers (a chunk being decoded is finished and dropped) and joins them.
  ~DecodeAhead();
  DecodeAhead(const DecodeAhead&) = delete;
  DecodeAhead& operator=(const DecodeAhead&) = delete;

  // Chunk k, k = 0, 1, 2... in order: waits for the helper decoding it, or decodes it here
  // when no helper has started it yet. Null with *err when its decode failed.
  Bytes take(size_t k, std::string* err);

 private:
  struct Slot {
    bool done = false;
    Bytes bytes;
    std::string err;
  };
  void helper();

  const Decode decode_;
  const size_t window_;
  // Each side is woken only when it waits for what just happened (a wake-up is a futex
  // call and a context switch on each side; waking every thread at every step cost a
  // quarter of a restore's time on two cores): the walk when the chunk it waits for is
  // done, one helper when the window lets one more chunk in.
  std::mutex mu_;
  std::condition_variable done_cv_;  // the walk waits here for slots_[walker_waits_for_]
  std::condition_variable room_cv_;  // helpers wait here for room in the window
  std::vector<Slot> slots_;
  size_t next_claim_ = 0;               // the first chunk nobody has started
  size_t taken_ = 0;                    // chunks the walk has taken
  size_t walker_waits_for_ = SIZE_MAX;  // the chunk the walk waits for, if it waits
  unsigned helpers_waiting_ = 0;        // helpers blocked on room_cv_
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ckptfwd
