// zstd, zlib and none as chain entropy stages.
#include "codec/chain/entropy.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace ckptfwd::codec::chain {
namespace {

struct CCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxFree {
  void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};

ZSTD_CCtx* thread_cctx() {
  thread_local std::unique_ptr<ZSTD_CCtx, CCtxFree> c(ZSTD_createCCtx());
  return c.get();
}
ZSTD_DCtx* thread_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxFree> c(ZSTD_createDCtx());
  return c.get();
}

}  // namespace

bool entropy_encode(Entropy e, int level, const uint8_t* in, size_t n, std::vector<uint8_t>& out) {
  size_t start = out.size();
  uint8_t dummy = 0;
  if (!n) in = &dummy;
  switch (e) {
    case Entropy::kNone:
      out.insert(out.end(), in, in + n);
      return true;
    case Entropy::kZstd: {
      ZSTD_CCtx* c = thread_cctx();
      if (!c) return false;
      size_t bound = ZSTD_compressBound(n);
      out.resize(start + bound);
      level = std::clamp(level, ZSTD_minCLevel(), ZSTD_maxCLevel());
      size_t r = ZSTD_compressCCtx(c, out.data() + start, bound, in, n, level);
      out.resize(ZSTD_isError(r) ? start : start + r);
      return !ZSTD_isError(r);
    }
    case Entropy::kZlib: {
      uLongf len = compressBound(static_cast<uLong>(n));
      out.resize(start + len);
      bool ok = compress2(out.data() + start, &len, in, static_cast<uLong>(n),
                          std::clamp(level, 0, 9)) == Z_OK;
      out.resize(ok ? start + len : start);
      return ok;
    }
    default:
      return false;  // fpzip has its own entry point
  }
}

bool entropy_decode(Entropy e, const uint8_t* in, size_t n, uint8_t* out, size_t raw_n) {
  uint8_t dummy = 0;
  if (!raw_n) out = &dummy;
  if (!n) in = &dummy;
  switch (e) {
    case Entropy::kNone:
      if (n != raw_n) return false;
      memcpy(out, in, n);
      return true;
    case Entropy::kZstd: {
      unsigned long long declared = ZSTD_getFrameContentSize(in, n);
      if (declared != raw_n) return false;
      ZSTD_DCtx* d = thread_dctx();
      if (!d) return false;
      size_t r = ZSTD_decompressDCtx(d, out, raw_n, in, n);
      return !ZSTD_isError(r) && r == raw_n;
    }
    case Entropy::kZlib: {
      uLongf out_len = static_cast<uLongf>(raw_n);
      uLong in_len = static_cast<uLong>(n);
      int rc = uncompress2(out, &out_len, in, &in_len);
      return rc == Z_OK && out_len == raw_n && in_len == n;
    }
    default:
      return false;
  }
}

}  // namespace ckptfwd::codec::chain
