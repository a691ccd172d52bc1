#include "store/container/chunk_encode.h"

#include <cstdint>

#include "codec/chain/typed.h"
#include "codec/codec.h"
#include "store/container/content_hash.h"

namespace ckptfwd {

namespace {
// Keeps the compressed form only when it saves at least ~5 %.
bool pays(size_t packed, size_t n) { return static_cast<double>(packed) * 1.05 <= n; }

void finish(EncodedChunk& c) { c.comp_hash = content_hash(c.bytes.data(), c.bytes.size()); }
}  // namespace

EncodedChunk encode_chunk(const uint8_t* raw, size_t n, const std::string& codec_name, int level) {
  // (A chunk over 4 GiB is refused unhashed.)
  return encode_chunk(raw, n, n <= UINT32_MAX ? content_hash(raw, n) : 0, codec_name, level);
}

EncodedChunk encode_chunk(const uint8_t* raw, size_t n, uint64_t raw_hash,
                          const std::string& codec_name, int level) {
  EncodedChunk c;
  if (n > UINT32_MAX) {
    c.codec = 0xFF;  // the format cannot describe it; append_chunk says so
    return c;
  }
  c.raw_size = static_cast<uint32_t>(n);
  c.raw_hash = raw_hash;
  const Codec* codec = codec_by_name(codec_name);
  if (codec && codec->id() != CodecId::kRaw && n > 0) {
    std::vector<uint8_t> out;
    if (codec->compress(raw, n, level, out) && pays(out.size(), n)) {
      c.codec = static_cast<uint8_t>(codec->id());
      c.bytes = std::move(out);
      finish(c);
      return c;
    }
  }
  c.codec = static_cast<uint8_t>(CodecId::kRaw);
  c.bytes.assign(raw, raw + n);
  finish(c);
  return c;
}

EncodedChunk encode_chunk_typed(const uint8_t* raw, size_t n, uint64_t raw_hash,
                                const codec::Chain& chain, const codec::Layout& layout,
                                const std::string& codec_name, int level) {
  if (n > 0 && n <= UINT32_MAX) {
    std::vector<uint8_t> out;
    if (codec::encode(chain, layout, raw, n, out) && pays(out.size(), n)) {
      EncodedChunk c;
      c.codec = static_cast<uint8_t>(CodecId::kChain);
      c.raw_size = static_cast<uint32_t>(n);
      c.bytes = std::move(out);
      if (chain.lossy) {
        c.lossy_raw.resize(n);
        const Codec* dec = codec_by_id(c.codec);
        codec::FpzipDecodeGrant grant(true);  // the bytes just encoded here
        // Never store what cannot decode.
        if (!dec || !dec->decompress(c.bytes.data(), c.bytes.size(), c.lossy_raw.data(), n))
          return encode_chunk(raw, n, raw_hash, codec_name, level);
        c.raw_hash = content_hash(c.lossy_raw.data(), n);
      } else {
        c.raw_hash = raw_hash;
      }
      finish(c);
      return c;
    }
  }
  return encode_chunk(raw, n, raw_hash, codec_name, level);
}

}  // namespace ckptfwd
