// zlib (deflate with the zlib wrapper): kept for compatibility and as the mcrEngine
// baseline. Decompression must consume exactly the stored bytes and fill exactly raw_n.
#include <zlib.h>

#include <algorithm>

#include "codec/codecs_builtin.h"

namespace ckptfwd::codec_detail {
namespace {

class ZlibCodec final : public Codec {
 public:
  CodecId id() const override { return CodecId::kZlib; }
  const char* name() const override { return "zlib"; }

  bool compress(const uint8_t* in, size_t n, int level, std::vector<uint8_t>& out) const override {
    level = std::clamp(level, 0, 9);
    uLong bound = compressBound(static_cast<uLong>(n));
    size_t start = out.size();
    out.resize(start + bound);
    uLongf len = bound;
    uint8_t dummy = 0;
    if (compress2(out.data() + start, &len, n ? in : &dummy, static_cast<uLong>(n), level) !=
        Z_OK) {
      out.resize(start);
      return false;
    }
    out.resize(start + len);
    return true;
  }

  bool decompress(const uint8_t* in, size_t n, uint8_t* out, size_t raw_n) const override {
    uLongf out_len = static_cast<uLongf>(raw_n);
    uLong in_len = static_cast<uLong>(n);
    uint8_t dummy = 0;
    int rc = uncompress2(raw_n ? out : &dummy, &out_len, n ? in : &dummy, &in_len);
    // Trailing garbage after the stream or a short stream is corruption, not success.
    return rc == Z_OK && out_len == raw_n && in_len == n;
  }
};

}  // namespace

const Codec& zlib_codec() {
  static const ZlibCodec c;
  return c;
}

}  // namespace ckptfwd::codec_detail
