#include "forwarder/pipeline/in_place_rehash.h"

#include <atomic>
#include <new>

#include "forwarder/pipeline/batch_hashes.h"
#include "forwarder/pipeline/recheck_gate.h"
#include "forwarder/staging/mapped_file.h"
#include "store/container/content_hash.h"

namespace ckptfwd::fwd {

bool rehash_in_place(const MergePlan& plan, const std::vector<ChunkSpan>& chunks,
                     const std::vector<uint64_t>& encoded_hashes, const std::vector<char>& recheck,
                     const std::vector<InPlaceFile>& files, std::vector<uint64_t>& file_hashes,
                     WorkerPool& pool,
                     const std::function<void(const uint8_t*, uint64_t)>& release) {
  std::vector<RecheckGate::StreamChunks> cuts(plan.streams.size());
  for (size_t j = chunks.size(); j-- > 0;)
    if (chunks[j].off == 0) cuts[chunks[j].stream] = {j, chunks[j].len};
  RecheckGate gate(std::move(cuts), chunks.size());
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
  // The chunks no walk reads (bytes of other files in a stream with in-place bytes).
  std::vector<size_t> unwalked;
  for (size_t j = 0; j < chunks.size(); ++j)
    if (recheck[chunks[j].stream] && gate.open(j)) unwalked.push_back(j);
  TaskGroup rechecks(pool);  // outlives the walks, which add to it
  {
    TaskGroup walks(pool);
    for (const InPlaceFile& f : files)
      walks.run([&, f] {
        file_hashes[f.index] = restored_hash(
            plan, f.index, f.size, f.overlay, {},
            [&](uint32_t s, uint64_t off, const uint8_t* p, uint64_t n) {
              release(p, n);
              gate.passed(s, off, n, [&](size_t j) { rechecks.run([&, j] { recheck_chunk(j); }); });
            });
      });
    for (size_t j : unwalked) rechecks.run([&, j] { recheck_chunk(j); });
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
