// zstd: the default byte codec. Frames record their content size, which decompress checks
// against the chunk's raw size before touching the output.
#include <zstd.h>

#include "codec/chain/entropy.h"
#include "codec/codecs_builtin.h"

namespace ckptfwd::codec_detail {
namespace {

class ZstdCodec final : public Codec {
 public:
  CodecId id() const override { return CodecId::kZstd; }
  const char* name() const override { return "zstd"; }

  // The chain's zstd stage (codec/chain/entropy.h): the same frame, a context per thread,
  // and pause points between the pieces of a large input.
  bool compress(const uint8_t* in, size_t n, int level, std::vector<uint8_t>& out) const override {
    if (!codec::chain::entropy_encode(codec::chain::Entropy::kZstd, level, in, n, out))
      return false;
    codec::chain::give_back_unused_bound(out);
    return true;
  }

  bool decompress(const uint8_t* in, size_t n, uint8_t* out, size_t raw_n) const override {
    // A frame that declares a different size is rejected before decoding anything.
    unsigned long long declared = ZSTD_getFrameContentSize(in, n);
    if (declared == ZSTD_CONTENTSIZE_ERROR) return false;
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != raw_n) return false;
    uint8_t dummy = 0;  // zstd wants a valid pointer even for an empty output
    size_t r = ZSTD_decompress(raw_n ? out : &dummy, raw_n, in, n);
    return !ZSTD_isError(r) && r == raw_n;
  }
};

}  // namespace

const Codec& zstd_codec() {
  static const ZstdCodec c;
  return c;
}

}  // namespace ckptfwd::codec_detail
