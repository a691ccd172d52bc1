// The global array an MPI-IO file view describes: a filetype built by
// MPI_Type_create_subarray or MPI_Type_create_darray (as parallel HDF5, PnetCDF and most
// MPI-IO codes build theirs) says that the file, from the view's displacement on, holds an
// array of gsizes elements of the view's etype, of which each rank writes its block. Every
// rank of a collective write passes the same global sizes, so the file region
// [disp, disp + product(gsizes) * element size) is one variable of that shape, whichever
// ranks wrote it.
//
// In hints files (base/dtype.h) a view is one header record and one record per dimension,
// among the ordinary 17-byte records:
//   header:    u64 disp | u64 ndims + (dtype code << 8) | u8 kViewHeaderCode
//   dimension: u64 gsize (C order: the last varies fastest) | u64 0 | u8 kViewDimCode
// A Fortran-order view is stored with its dimensions reversed, so the array always reads in
// C order. Like hints, views never affect correctness: a malformed one is ignored.
#pragma once
#include <cstddef>
#include <cstdint>

#include "base/dtype.h"

namespace ckptfwd {

inline constexpr uint8_t kViewHeaderCode = 0xf0;
inline constexpr uint8_t kViewDimCode = 0xf1;
inline constexpr uint32_t kMaxViewDims = 8;

struct ViewShape {
  uint64_t disp = 0;
  uint8_t dtype = 0;  // DtypeCode, never kBytes
  uint32_t ndims = 0;
  uint64_t gsizes[kMaxViewDims] = {};
  bool operator==(const ViewShape& o) const {
    if (disp != o.disp || dtype != o.dtype || ndims != o.ndims) return false;
    for (uint32_t d = 0; d < ndims; ++d)
      if (gsizes[d] != o.gsizes[d]) return false;
    return true;
  }
};

// The view's bytes in the file (product(gsizes) * element size); false when v is not a
// view of 1..kMaxViewDims non-empty dimensions of a numeric dtype, or the size overflows
// 62 bits.
inline bool view_bytes(const ViewShape& v, uint64_t* bytes) {
  if (v.ndims == 0 || v.ndims > kMaxViewDims || v.dtype == 0 || v.dtype > kMaxDtypeCode)
    return false;
  uint64_t n = dtype_size(v.dtype);
  for (uint32_t d = 0; d < v.ndims; ++d)
    if (v.gsizes[d] == 0 || __builtin_mul_overflow(n, v.gsizes[d], &n)) return false;
  if (n > (uint64_t{1} << 62) || v.disp > (uint64_t{1} << 62) - n) return false;
  *bytes = n;
  return true;
}

// The 17-byte records of v (1 + ndims of them) into out, which holds at least
// (1 + kMaxViewDims) * kHintRecordBytes bytes. Returns the bytes written.
inline size_t encode_view_records(const ViewShape& v, uint8_t* out) {
  auto put = [&out](uint64_t a, uint64_t b, uint8_t code) {
    for (int i = 0; i < 8; ++i) *out++ = static_cast<uint8_t>(a >> (8 * i));
    for (int i = 0; i < 8; ++i) *out++ = static_cast<uint8_t>(b >> (8 * i));
    *out++ = code;
  };
  put(v.disp, v.ndims + (uint64_t{v.dtype} << 8), kViewHeaderCode);
  for (uint32_t d = 0; d < v.ndims; ++d) put(v.gsizes[d], 0, kViewDimCode);
  return (1 + v.ndims) * kHintRecordBytes;
}

}  // namespace ckptfwd
