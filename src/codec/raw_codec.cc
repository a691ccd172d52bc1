// Stores bytes as they are: the fallback when compression does not pay.
#include <cstring>

#include "codec/codecs_builtin.h"

namespace ckptfwd::codec_detail {
namespace {

class RawCodec final : public Codec {
 public:
  CodecId id() const override { return CodecId::kRaw; }
  const char* name() const override { return "raw"; }
  bool compress(const uint8_t* in, size_t n, int, std::vector<uint8_t>& out) const override {
    out.insert(out.end(), in, in + n);
    return true;
  }
  bool decompress(const uint8_t* in, size_t n, uint8_t* out, size_t raw_n) const override {
    if (n != raw_n) return false;
    if (n) memcpy(out, in, n);
    return true;
  }
};

}  // namespace

const Codec& raw_codec() {
  static const RawCodec c;
  return c;
}

}  // namespace ckptfwd::codec_detail
