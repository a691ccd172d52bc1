// One interface for every byte codec: raw, zstd, zlib, and the typed codec chain (kChain,
// codec/chain/typed.h), whose stages are the transforms (codec/chain/transforms.h) and an entropy
// stage that is zstd, zlib, fpzip for floats (codec/chain/entropy_fpzip.cc) or none.
// Modeled on ADIOS2's operator idea: a codec is looked up by a stable id stored in each
// chunk, so a container written today stays readable when defaults change.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ckptfwd {

// kChain: a typed codec chain (codec/chain/typed.h), self-describing in the chunk bytes.
// kRef: no codec: the chunk names an equal chunk of another container of the store
// (store/container/chunk_ref.h, container format version 4); codec_by_id(kRef) is nullptr.
enum class CodecId : uint8_t { kRaw = 0, kZstd = 1, kZlib = 2, kChain = 3, kRef = 4 };

class Codec {
 public:
  virtual ~Codec() = default;
  virtual CodecId id() const = 0;
  virtual const char* name() const = 0;
  // Appends the compressed form of in[0..n) to out. False on codec failure.
  virtual bool compress(const uint8_t* in, size_t n, int level,
                        std::vector<uint8_t>& out) const = 0;
  // Decompresses in[0..n) into exactly raw_n bytes at out. False on corrupt input or a size
  // mismatch; never writes past out + raw_n.
  virtual bool decompress(const uint8_t* in, size_t n, uint8_t* out, size_t raw_n) const = 0;
};

// nullptr for an unknown id/name (a container from the future, or a typo).
const Codec* codec_by_id(uint8_t id);
const Codec* codec_by_name(const std::string& name);

}  // namespace ckptfwd
