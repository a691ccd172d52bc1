// Chunks of a container stream, compressed and hashed, ready for ContainerWriter::append_chunk.
// Safe to call from many threads at once (the pipeline encodes chunks in parallel).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "codec/chain/typed.h"

namespace ckptfwd {

struct EncodedChunk {
  uint8_t codec = 0;  // CodecId
  uint32_t raw_size = 0;
  uint64_t raw_hash = 0;   // content_hash(raw bytes) (store/container/content_hash.h)
  uint64_t comp_hash = 0;  // content_hash(bytes)
  std::vector<uint8_t> bytes;
  // A lossy chain's chunk: the bytes a restore gives back (raw_hash is theirs), which the
  // caller needs for the hash of every file that holds them. Empty for exact chunks.
  std::vector<uint8_t> lossy_raw;
};

// Compresses with codec_name at level; stores raw when the ratio is under 1.05 (raw chunks
// restore faster). A chunk over 4 GiB gets codec 0xFF, which append_chunk refuses.
EncodedChunk encode_chunk(const uint8_t* raw, size_t n, const std::string& codec_name, int level);
// The same for a caller that has hashed raw already (raw_hash = content_hash(raw, n)): a
// chunk's bytes are read from memory once less, which for an fsync's 64 MiB is a pass
// of about 15 ms of one core on the test machine.
EncodedChunk encode_chunk(const uint8_t* raw, size_t n, uint64_t raw_hash,
                          const std::string& codec_name, int level);

// Encodes with a typed codec chain (codec/chain/typed.h) as a CodecId::kChain chunk; when the
// chain fails (a lossy bound that cannot hold) or does not pay, falls back to
// encode_chunk(codec_name, level), which may store raw. A lossy chain's chunk is decoded
// once here: raw_hash covers the bytes a restore gives back (lossy_raw). The caller gives
// raw_hash = content_hash(raw, n), as to encode_chunk above.
EncodedChunk encode_chunk_typed(const uint8_t* raw, size_t n, uint64_t raw_hash,
                                const codec::Chain& chain, const codec::Layout& layout,
                                const std::string& codec_name, int level);

}  // namespace ckptfwd
