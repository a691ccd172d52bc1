#include "interpose/mpi/etype_map.h"

#include "base/dtype.h"

namespace ckptfwd::interpose {

uint8_t dtype_code_of_etype(MPI_Datatype etype) {
  // A table, not a switch: several names are the same handle (MPI_LONG_LONG and
  // MPI_LONG_LONG_INT), and a build without Fortran makes the Fortran ones MPI_DATATYPE_NULL.
  struct Entry {
    MPI_Datatype type;
    DtypeCode code;
  };
  static const Entry table[] = {
      {MPI_DOUBLE, DtypeCode::kF64LE},
      {MPI_REAL8, DtypeCode::kF64LE},
      {MPI_DOUBLE_PRECISION, DtypeCode::kF64LE},
      {MPI_FLOAT, DtypeCode::kF32LE},
      {MPI_REAL, DtypeCode::kF32LE},
      {MPI_REAL4, DtypeCode::kF32LE},
      {MPI_INT, DtypeCode::kI32LE},
      {MPI_INT32_T, DtypeCode::kI32LE},
      {MPI_INTEGER, DtypeCode::kI32LE},
      {MPI_UNSIGNED, DtypeCode::kU32LE},
      {MPI_UINT32_T, DtypeCode::kU32LE},
      {MPI_LONG, DtypeCode::kI64LE},
      {MPI_LONG_LONG, DtypeCode::kI64LE},
      {MPI_INT64_T, DtypeCode::kI64LE},
      {MPI_INTEGER8, DtypeCode::kI64LE},
      {MPI_UNSIGNED_LONG, DtypeCode::kU64LE},
      {MPI_UINT64_T, DtypeCode::kU64LE},
      {MPI_SHORT, DtypeCode::kI16LE},
      {MPI_INT16_T, DtypeCode::kI16LE},
      {MPI_UNSIGNED_SHORT, DtypeCode::kU16LE},
      {MPI_UINT16_T, DtypeCode::kU16LE},
  };
  // MPI_LONG is 8 bytes and everything little-endian on the LP64 targets we build for.
  static_assert(sizeof(long) == 8 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "the etype table assumes LP64 little-endian");
  if (etype == MPI_DATATYPE_NULL) return 0;
  for (const Entry& e : table)
    if (e.type == etype) return static_cast<uint8_t>(e.code);
  return 0;
}

}  // namespace ckptfwd::interpose
