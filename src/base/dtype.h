// Element types of checkpoint bytes, as far as ckptfwd learns them (MPI-IO file views
// today; HDF5/netCDF headers and schemas later). A hint says "bytes [off, off+len) of this
// file are an array of <dtype>"; the data-aware merge schemes and codecs use them. Hints
// never affect correctness: a wrong or missing hint only changes how well bytes compress.
//
// Hints file (library -> forwarder, like the extents files of protocol.h): in the session
// dir, named h<vid>.<pid>.<seq>, mode 0600, a sequence of 17-byte records:
//   u64 offset (little endian) | u64 length (little endian) | u8 dtype code (DtypeCode)
// Records may come in any order and overlap; later records win where they overlap.
#pragma once
#include <cstdint>

namespace ckptfwd {

enum class DtypeCode : uint8_t {
  kBytes = 0,  // untyped; never written as a hint
  kI8 = 1, kU8 = 2,
  kI16LE = 3, kU16LE = 4,
  kI32LE = 5, kU32LE = 6,
  kI64LE = 7, kU64LE = 8,
  kF32LE = 9, kF64LE = 10,
};
inline constexpr uint8_t kMaxDtypeCode = 10;
inline constexpr unsigned kHintRecordBytes = 17;

// "F64LE", "I32LE", ... ("bytes" for kBytes, nullptr for an unknown code).
inline const char* dtype_name(uint8_t code) {
  static const char* const names[] = {"bytes", "I8",    "U8",    "I16LE", "U16LE", "I32LE",
                                      "U32LE", "I64LE", "U64LE", "F32LE", "F64LE"};
  return code <= kMaxDtypeCode ? names[code] : nullptr;
}

// Element size in bytes (1 for kBytes, 0 for an unknown code).
inline unsigned dtype_size(uint8_t code) {
  static const unsigned sizes[] = {1, 1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
  return code <= kMaxDtypeCode ? sizes[code] : 0;
}

}  // namespace ckptfwd
