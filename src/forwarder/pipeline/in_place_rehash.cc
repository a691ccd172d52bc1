#include "forwarder/pipeline/in_place_rehash.h"

#include <atomic>
#include <new>
#include <stdexcept>
#include <utility>

#include "forwarder/pipeline/batch_hashes.h"
#include "forwarder/pipeline/recheck_gate.h"
#include "forwarder/staging/mapped_file.h"
#include "store/container/content_hash.h"

namespace ckptfwd::fwd {

std::vector<RecheckGate::StreamChunks> stream_chunks(const MergePlan& plan,
                                                     const std::vector<ChunkSpan>& chunks) {
  std::vector<RecheckGate::StreamChunks> cuts(plan.streams.size());
  for (size_t j = chunks.size(); j-- > 0;)
    if (chunks[j].off == 0) cuts[chunks[j].stream] = {j, chunks[j].len};
  return cuts;
}

bool rehash_in_place(const MergePlan& plan, const std::vector<ChunkSpan>& chunks,
                     const std::vector<uint64_t>& encoded_hashes, const std::vector<char>& recheck,
                     const std::vector<InPlaceFile>& files, std::vector<uint64_t>& file_hashes,
                     WorkerPool& pool, const std::function<void(const uint8_t*, uint64_t)>& release,
                     EncodeFront* front, const std::function<void()>& first_walk) {
  RecheckGate gate(stream_chunks(plan, chunks), chunks.size());
  for (const InPlaceFile& f : files)
    for (const FileRange& r : plan.ranges[f.index]) gate.expect(r.stream, r.stream_off, r.len);
  std::atomic<bool> differs{false};
  auto recheck_chunk = [&](size_t j) {
    if (differs.load(std::memory_order_relaxed)) return;
    ContentHashStream h;
    if (!h.ok()) throw std::bad_alloc();
    plan.streams[chunks[j].stream].bytes.for_each(chunks[j].off, chunks[j].len,
                                                  [&](const uint8_t* p, uint64_t n) {
                                                    populate_for_read(p, n);
                                                    h.update(p, n);
                                                    release(p, n);
                                                  });
    if (h.digest() != encoded_hashes[j]) differs = true;
  };
  // The chunks no walk reads (bytes of other files in a stream with in-place bytes), once
  // every chunk is encoded.
  std::vector<size_t> unwalked;
  for (size_t j = 0; j < chunks.size(); ++j)
    if (recheck[chunks[j].stream] && gate.open(j)) unwalked.push_back(j);
  bool first = true;  // first_walk not called yet (only this thread touches it)
  bool unwalked_queued = false;
  TaskGroup rechecks(pool);  // outlives the walks, which add to it
  auto walk = [&](const InPlaceFile& f, const PieceReady& ready) {
    file_hashes[f.index] = restored_hash(
        plan, f.index, f.size, f.overlay, {},
        [&](uint32_t s, uint64_t off, const uint8_t* p, uint64_t n) {
          release(p, n);
          gate.passed(s, off, n, [&](size_t j) { rechecks.run([&, j] { recheck_chunk(j); }); });
        },
        ready);
  };
  {
    TaskGroup walks(pool);  // (after walk, which its tasks use)
    size_t next = 0;        // files[0, next) are walked or handed to the workers
    // Every chunk is encoded: the files left to the workers at once, and the second
    // hashes of the chunks no walk reads.
    auto hand_out_rest = [&] {
      if (std::exchange(first, false) && first_walk) first_walk();
      for (; next < files.size(); ++next) walks.run([&, f = files[next]] { walk(f, {}); });
      if (!std::exchange(unwalked_queued, true))
        for (size_t j : unwalked) rechecks.run([&, j] { recheck_chunk(j); });
    };
    // Behind the encoders, on this thread: a walk waiting for a chunk never holds a worker
    // the chunk's encoding needs. Once the last chunk is encoded, the files after this
    // one (and the chunks no walk reads) go to the workers at the next piece.
    auto wait_for_encoders = [&](uint32_t s, uint64_t off, uint64_t n) {
      if (!front->wait(s, off, n)) throw std::runtime_error("the batch's encoding stopped");
      if (std::exchange(first, false) && first_walk) first_walk();
      if ((next < files.size() || !unwalked_queued) && front->all_encoded()) hand_out_rest();
    };
    while (front && next < files.size() && !front->all_encoded())
      walk(files[next++], wait_for_encoders);
    if (front && !front->wait_all()) throw std::runtime_error("the batch's encoding stopped");
    hand_out_rest();
    walks.wait();
  }
  // A chunk the walks did not open (none expected: they read what they were told) is
  // read again now, after them, rather than not at all.
  for (size_t j = 0; j < chunks.size(); ++j)
    if (recheck[chunks[j].stream] && !gate.open(j)) rechecks.run([&, j] { recheck_chunk(j); });
  rechecks.wait();
  return !differs.load();
}

}  // namespace ckptfwd::fwd
