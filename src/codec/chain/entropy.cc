// zstd, zlib and none as chain entropy stages.
#include "codec/chain/entropy.h"

#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_c_stableInBuffer, ZSTD_c_stableOutBuffer
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "base/pause_point.h"

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
// n bytes at `level` into out (room for ZSTD_compressBound(n)) as one frame, fed in pieces
// of kPiece with a pause point between them (base/pause_point.h). The frame declares its
// size like a one-shot frame and decodes the same way. Returns its length or a zstd error.
size_t zstd_in_pieces(ZSTD_CCtx* c, uint8_t* out, size_t room, const uint8_t* in, size_t n,
                      int level) {
  constexpr size_t kPiece = 1u << 20;
  if (n <= kPiece) return ZSTD_compressCCtx(c, out, room, in, n, level);
  size_t r = ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
  if (!ZSTD_isError(r)) r = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
  if (!ZSTD_isError(r)) r = ZSTD_CCtx_setPledgedSrcSize(c, n);
  if (ZSTD_isError(r)) return r;
  // The input stays where it is and only grows, the output is the whole bound: zstd then
  // reads and writes them in place instead of copying each piece through buffers of its
  // own (which also saves allocating them). Only from zstd 1.5.4: 1.4.7 to 1.5.2 accept
  // ZSTD_c_stableInBuffer but then refuse an input that grows between calls, and every
  // frame of more than one piece would fail (its chunk stored raw).
  static const bool stable = ZSTD_versionNumber() >= 10504;
  if (stable) {
    ZSTD_CCtx_setParameter(c, ZSTD_c_stableInBuffer, 1);
    ZSTD_CCtx_setParameter(c, ZSTD_c_stableOutBuffer, 1);
  }
  ZSTD_outBuffer o{out, room, 0};
  ZSTD_inBuffer i{in, 0, 0};
  while (i.size < n) {
    if (i.size) pause_point();
    i.size = std::min(n, i.size + kPiece);
    const ZSTD_EndDirective end = i.size == n ? ZSTD_e_end : ZSTD_e_continue;
    do {
      const size_t was_in = i.pos, was_out = o.pos;
      r = ZSTD_compressStream2(c, &o, &i, end);
      if (ZSTD_isError(r)) return r;
      // (room is the bound, so every call moves on: one that does not would loop forever)
      if (i.pos == was_in && o.pos == was_out && r)
        return static_cast<size_t>(-ZSTD_error_dstSize_tooSmall);
    } while (i.pos < i.size || (end == ZSTD_e_end && r));
  }
  return o.pos;
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
      const size_t bound = ZSTD_compressBound(n);
      out.resize(start + bound);
      level = std::clamp(level, ZSTD_minCLevel(), ZSTD_maxCLevel());
      size_t r = zstd_in_pieces(c, out.data() + start, bound, in, n, level);
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
