// Decoding of kChain chunks (hostile input) and the chain name of a chunk.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "codec/chain/chain_format.h"

namespace ckptfwd::codec::chain {

// Decodes in[0, n) into exactly raw_n bytes at out; false on anything malformed.
bool decode_chunk(const uint8_t* in, size_t n, uint8_t* out, size_t raw_n);
std::string describe_chunk(const uint8_t* in, size_t n);
// The quantization step's record of the chunk's header; false when it has none.
bool quant_record(const uint8_t* in, size_t n, StepRecord* out);

}  // namespace ckptfwd::codec::chain
