// fpzip (Lindstrom's lossless float predictor + range coder) as a chain entropy stage for
// F32/F64 with the real dims. Body: u64 length | fpzip stream (no fpzip header: the dims
// and type come from the chunk header, so a hostile stream cannot declare its own).
//
// fpzip_read_from_buffer takes no buffer size and its range decoder reads without bound
// on a hostile stream (a zero range never renormalises), so no padding makes it safe: a
// stream is decoded only where fpzip_decode_allowed() (typed.h: a grant for a chunk whose
// stored bytes passed their checksum in the user's own container). The zero padding below
// only keeps a truncated trusted stream from reading past its buffer.
#include <fpzip.h>

#include <atomic>
#include <climits>
#include <cstring>

#include "codec/chain/entropy.h"
#include "codec/chain/load_store.h"
#include "codec/chain/typed.h"

namespace ckptfwd::codec {
namespace {
std::atomic<bool> g_fpzip_trusted{false};
thread_local bool t_decode_granted = false;
}  // namespace
void set_fpzip_trusted(bool on) { g_fpzip_trusted = on; }
bool fpzip_trusted() { return g_fpzip_trusted; }
FpzipDecodeGrant::FpzipDecodeGrant(bool allow) : before_(t_decode_granted) {
  t_decode_granted = allow;
}
FpzipDecodeGrant::~FpzipDecodeGrant() { t_decode_granted = before_; }
bool fpzip_decode_allowed() { return g_fpzip_trusted || t_decode_granted; }
}  // namespace ckptfwd::codec

namespace ckptfwd::codec::chain {
namespace {

struct Dims {
  int nx = 1, ny = 1, nz = 1;
};

// nx = the last dim, ny = the one before, nz = the rest; one row when they do not divide m.
bool dims_for(uint64_t m, const std::vector<uint64_t>& inner, Dims* d) {
  if (m == 0 || m >= uint64_t(INT_MAX)) return false;
  uint64_t nx = inner.empty() ? m : inner.back();
  uint64_t ny = inner.size() >= 2 ? inner[inner.size() - 2] : 1;
  if (nx == 0 || ny == 0 || nx > m || m % nx != 0 || (m / nx) % ny != 0) nx = m, ny = 1;
  d->nx = static_cast<int>(nx);
  d->ny = static_cast<int>(ny);
  d->nz = static_cast<int>(m / nx / ny);
  return true;
}

void set_fields(FPZ* f, uint32_t w, const Dims& d) {
  f->type = w == 4 ? FPZIP_TYPE_FLOAT : FPZIP_TYPE_DOUBLE;
  f->prec = 0;  // lossless
  f->nx = d.nx;
  f->ny = d.ny;
  f->nz = d.nz;
  f->nf = 1;
}

}  // namespace

bool fpzip_encode(const uint8_t* in, uint64_t m, uint32_t w, const std::vector<uint64_t>& inner,
                  std::vector<uint8_t>& out) {
  size_t at = out.size();
  out.resize(at + 8);
  if (m == 0) {
    store<uint64_t>(out.data() + at, 0);
    return true;
  }
  Dims d;
  if ((w != 4 && w != 8) || !dims_for(m, inner, &d)) return false;
  size_t cap = m * w + m + 1024;  // incompressible floats grow a little
  out.resize(at + 8 + cap);
  FPZ* f = fpzip_write_to_buffer(out.data() + at + 8, cap);
  if (!f) return false;
  set_fields(f, w, d);
  size_t len = fpzip_write(f, in);
  fpzip_write_close(f);
  if (len == 0 || len > cap) {
    out.resize(at);
    return false;
  }
  out.resize(at + 8 + len);
  store<uint64_t>(out.data() + at, len);
  return true;
}

bool fpzip_decode(const uint8_t* in, size_t n, uint8_t* out, uint64_t m, uint32_t w,
                  const std::vector<uint64_t>& inner, size_t* consumed) {
  if (!fpzip_decode_allowed() || n < 8) return false;
  uint64_t len = load<uint64_t>(in);
  if (len > n - 8) return false;
  *consumed = 8 + len;
  if (m == 0) return len == 0;
  Dims d;
  if ((w != 4 && w != 8) || !dims_for(m, inner, &d) || len == 0) return false;
  thread_local std::vector<uint8_t> padded;
  size_t need = len + 2 * m * w + 4096;
  padded.assign(need, 0);
  memcpy(padded.data(), in + 8, len);
  FPZ* f = fpzip_read_from_buffer(padded.data());
  if (!f) return false;
  set_fields(f, w, d);
  size_t r = fpzip_read(f, out);
  fpzip_read_close(f);
  return r != 0 && r <= len;  // a stream that needed the padding was truncated
}

}  // namespace ckptfwd::codec::chain
