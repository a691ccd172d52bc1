// The last stage of a chain: zstd or zlib at a level, none, or fpzip (floats with dims).
// One zstd context per thread (thread_local), reused for every chunk.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "codec/chain/chain_format.h"

namespace ckptfwd::codec::chain {

// Appends the coded form of in[0, n) to out (grown to the stage's bound while coding: a
// buffer reused for many codings keeps that room).
bool entropy_encode(Entropy e, int level, const uint8_t* in, size_t n, std::vector<uint8_t>& out);
// For a finished chunk: gives back the room past its bytes when they fill less than half
// of it, since chunks wait in memory for the container's writer (the pipeline's window).
inline void give_back_unused_bound(std::vector<uint8_t>& chunk) {
  if (chunk.size() < chunk.capacity() / 2) chunk.shrink_to_fit();
}
// Decodes exactly raw_n bytes into out from in[0, n); false unless the body is exactly that.
bool entropy_decode(Entropy e, const uint8_t* in, size_t n, uint8_t* out, size_t raw_n);

// fpzip (entropy_fpzip.cc): m floats (w 4 or 8, native order) with the real dims; the
// body records its own length. fpzip_decode decodes in[0, n) into m values of out.
bool fpzip_encode(const uint8_t* in, uint64_t m, uint32_t w, const std::vector<uint64_t>& inner,
                  std::vector<uint8_t>& out);
bool fpzip_decode(const uint8_t* in, size_t n, uint8_t* out, uint64_t m, uint32_t w,
                  const std::vector<uint64_t>& inner, size_t* consumed);

}  // namespace ckptfwd::codec::chain
