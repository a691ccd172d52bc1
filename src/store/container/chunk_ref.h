// Reference chunks (CodecId::kRef, container format version 4): a chunk of a new container
// whose raw bytes equal a chunk already in the store (an unchanged variable of an
// incremental checkpoint) is stored as the name of that chunk instead of its bytes.
//
// Stored bytes of a reference chunk (little endian, strings are u32 length + bytes):
//   u8 version (1) | str container | u64 container size | u64 container index xxh64
//   | str stream key | u32 stream | u32 chunk
// container: a plain file name in the same store directory, ending in ".ckc" (never a
// path: a hostile container must not make the reader open anything else). The identity
// (size, index xxh64: ContainerIdentity) tells the reader that the file it opens is the
// container the writer referred to. The chunk's own raw_size and raw_hash in the index are
// those of the referenced chunk, which is never itself a reference (depth 1: the writer
// always points at the original), so resolving one costs one open and one decode.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "store/container/chunk_encode.h"
#include "store/container/container.h"

namespace ckptfwd {

struct ChunkRef {
  std::string container;   // file name in the same store directory
  ContainerIdentity id;    // of that container
  std::string stream_key;  // key of the referenced stream (checked, and for messages)
  uint32_t stream = 0;     // index of the stream in that container
  uint32_t chunk = 0;      // index of the chunk in that stream
  bool operator==(const ChunkRef&) const = default;
};

// Bounds that keep a hostile reference small (the reader refuses a larger stored chunk).
inline constexpr size_t kMaxRefNameBytes = 255;
inline constexpr size_t kMaxRefKeyBytes = 1024;
inline constexpr size_t kMaxChunkRefBytes =
    1 + 4 + kMaxRefNameBytes + 8 + 8 + 4 + kMaxRefKeyBytes + 4 + 4;

// Why name cannot be the container of a reference, or "" when it can: not empty, at most
// kMaxRefNameBytes, no '/' or NUL, not "." or "..", ends in ".ckc".
std::string bad_ref_container_name(const std::string& name);

// The stored bytes of r (r must pass the checks of decode_chunk_ref).
std::vector<uint8_t> encode_chunk_ref(const ChunkRef& r);

// Parses stored bytes [p, p+n) of a reference chunk. False with *err saying what is wrong
// (unknown version, truncated, trailing bytes, a container name that is not a plain .ckc
// file name, an unknown identity, a key too long).
bool decode_chunk_ref(const uint8_t* p, size_t n, ChunkRef& out, std::string* err);

// The chunk to append for a reference to r whose raw bytes are raw_size bytes hashing to
// raw_hash (the referenced chunk's).
EncodedChunk make_ref_chunk(const ChunkRef& r, uint32_t raw_size, uint64_t raw_hash);

}  // namespace ckptfwd
