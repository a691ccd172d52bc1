// The checkpoint contents of make bench's writer (bench_ckpt_writer.cc): a header and two
// smooth float64 fields per rank, like examples/stencil3d's, so that the forwarder's typed
// codecs see real floating-point data (full mantissas varying smoothly), not zeros or a
// byte pattern. The same generator checks every byte when the files are read back.
//
// File layout (little endian; tools/bench/bench_ckpt.schema says the same to ckptfwd):
//   char magic[8] "BNCHCKP\0" | int32 rank | int32 nranks | int32 nx | int32 ny | int32 nz |
//   int32 pad (0)                                              (32 bytes)
//   float64 temperature[nz][ny][nx] | float64 concentration[nz][ny][nx]
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace bench {

constexpr size_t kHeaderBytes = 32;
constexpr int kNx = 256, kNy = 256;
// One z plane of both fields: the unit in which a rank's share of a checkpoint is sized.
constexpr size_t kPlaneBytes = 2 * sizeof(double) * kNx * kNy;

struct Shape {
  int rank = 0, nranks = 1, nz = 1;
  int step = 0;  // the checkpoint's step in its job: a later step's fields have moved on
  size_t field_values() const { return static_cast<size_t>(nz) * kNy * kNx; }
  size_t file_bytes() const { return kHeaderBytes + 2 * field_values() * sizeof(double); }
};

inline void header(const Shape& s, unsigned char out[kHeaderBytes]) {
  const int32_t v[6] = {s.rank, s.nranks, kNx, kNy, s.nz, 0};
  memcpy(out, "BNCHCKP", 8);
  memcpy(out + 8, v, sizeof(v));
}

// Value `i` (0-based over the whole field, x fastest) of field `f` (0 temperature,
// 1 concentration) of rank s.rank. A row (fixed y, z) is a sine wave in x whose phase and
// amplitude vary smoothly with y and the global z; the wave is advanced by rotation, so a
// row costs two libm calls, and every row restarts exactly, so any range regenerates
// bit-identically. A later step advances every wave's phase (a simulation's next state:
// every value differs, the fields as smooth).
inline void row(const Shape& s, int f, size_t row_index, double* out) {
  const int y = static_cast<int>(row_index % kNy);
  const int gz = s.rank * s.nz + static_cast<int>(row_index / kNy);
  const double phase = 0.017 * gz + 0.0031 * y + 0.05 * s.step;
  const double amp = 40.0 * cos(0.023 * y + 0.011 * gz) + (f ? 0.0 : 3.0);
  const double cw = cos(0.031), sw = sin(0.031);
  double sn = sin(phase), cs = cos(phase);
  for (int x = 0; x < kNx; ++x) {
    out[x] = f == 0 ? 300.0 + amp * sn + 0.002 * x : 0.5 + 0.01 * amp * cs;
    const double n = sn * cw + cs * sw;
    cs = cs * cw - sn * sw;
    sn = n;
  }
}

// Bytes [off, off+len) of rank s.rank's file, into out.
inline void fill(const Shape& s, size_t off, size_t len, unsigned char* out) {
  unsigned char hdr[kHeaderBytes];
  header(s, hdr);
  double vals[kNx];
  const size_t row_bytes = sizeof(vals), field_bytes = s.field_values() * sizeof(double);
  while (len > 0) {
    size_t n;
    if (off < kHeaderBytes) {
      n = len < kHeaderBytes - off ? len : kHeaderBytes - off;
      memcpy(out, hdr + off, n);
    } else {
      const size_t body = off - kHeaderBytes;
      const int f = body >= field_bytes ? 1 : 0;
      const size_t in_field = body - (f ? field_bytes : 0);
      const size_t r = in_field / row_bytes, in_row = in_field % row_bytes;
      row(s, f, r, vals);
      n = row_bytes - in_row < len ? row_bytes - in_row : len;
      memcpy(out, reinterpret_cast<unsigned char*>(vals) + in_row, n);
    }
    out += n;
    off += n;
    len -= n;
  }
}

}  // namespace bench
