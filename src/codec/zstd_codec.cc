// zstd: the default byte codec. Frames record their content size, which decompress checks
// against the chunk's raw size before touching the output.
#include <zstd.h>

#include <algorithm>
#include <memory>

#include "codec/codecs_builtin.h"

namespace ckptfwd::codec_detail {
namespace {

// One compression context per thread, reused for every chunk: a context costs about a
// megabyte to set up at the default levels, as much as compressing a small chunk.
struct CCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
ZSTD_CCtx* thread_cctx() {
  thread_local std::unique_ptr<ZSTD_CCtx, CCtxFree> c(ZSTD_createCCtx());
  return c.get();
}

class ZstdCodec final : public Codec {
 public:
  CodecId id() const override { return CodecId::kZstd; }
  const char* name() const override { return "zstd"; }

  bool compress(const uint8_t* in, size_t n, int level, std::vector<uint8_t>& out) const override {
    level = std::clamp(level, ZSTD_minCLevel(), ZSTD_maxCLevel());
    size_t bound = ZSTD_compressBound(n);
    if (ZSTD_isError(bound)) return false;
    size_t start = out.size();
    out.resize(start + bound);
    ZSTD_CCtx* cctx = thread_cctx();
    size_t r = cctx ? ZSTD_compressCCtx(cctx, out.data() + start, bound, in, n, level)
                    : ZSTD_compress(out.data() + start, bound, in, n, level);
    if (ZSTD_isError(r)) {
      out.resize(start);
      return false;
    }
    out.resize(start + r);
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
