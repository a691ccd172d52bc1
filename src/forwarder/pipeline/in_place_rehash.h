// The hashes that make a container committed from files read in place trustworthy
// (in_place.h): what a restore of each such file gives back, hashed from the streams once
// the chunks holding each piece were encoded, and each chunk holding its bytes hashed a
// second time, which
// must equal its hash at encoding. Equal, the bytes did not change between the encoding
// and the file's hash, so that hash speaks for the container (but for a change undone
// through a mapping, which the pipeline's maps check makes unlikely).
//
// The file hash is one serial walk a file; a chunk's second hash runs as soon as the walks
// have passed its bytes (recheck_gate.h), on the workers the walks leave idle. Given the
// encoders' front (encode_front.h), the checks may begin before the last chunk is
// encoded: the files are walked one after the other on the calling thread, each piece once
// its chunks are encoded, and once every chunk is, the files left are walked on the
// workers at once.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "forwarder/pipeline/encode_front.h"
#include "forwarder/pipeline/merge_plan.h"
#include "forwarder/pipeline/recheck_gate.h"
#include "forwarder/util/worker_pool.h"

namespace ckptfwd::fwd {

// A chunk of the batch: bytes [off, off+len) of stream `stream`. A stream's chunks are
// consecutive in the batch's list and all of one length but the last.
struct ChunkSpan {
  uint32_t stream = 0;
  uint64_t off = 0, len = 0;
};

struct InPlaceFile {
  size_t index = 0;   // the file's index in the plan
  uint64_t size = 0;  // its size (FileEntry.size)
  bool overlay = false;
};

// Fills file_hashes[f.index] for each of files, and hashes again every chunk of a stream
// with recheck[stream] set. True when each of those chunks hashed to encoded_hashes[j]
// again. release(p, n): called with the mapped bytes read (to give their pages back).
// front: the chunks encoded so far (null: all of them); first_walk: called once, before the
// first byte is walked, once its chunks are encoded. Throws what the hashing throws
// (bad_alloc), and std::runtime_error when the front was abandoned.
// encoded_hashes[j] is read only once chunk j is encoded.
bool rehash_in_place(const MergePlan& plan, const std::vector<ChunkSpan>& chunks,
                     const std::vector<uint64_t>& encoded_hashes, const std::vector<char>& recheck,
                     const std::vector<InPlaceFile>& files, std::vector<uint64_t>& file_hashes,
                     WorkerPool& pool, const std::function<void(const uint8_t*, uint64_t)>& release,
                     EncodeFront* front = nullptr, const std::function<void()>& first_walk = {});

// How each stream of the batch is cut into chunks (RecheckGate, EncodeFront).
std::vector<RecheckGate::StreamChunks> stream_chunks(const MergePlan& plan,
                                                     const std::vector<ChunkSpan>& chunks);

}  // namespace ckptfwd::fwd
