// The etype of an MPI-IO file view -> the dtype hint of the bytes written through it
// (MPICH ABI; mpi.h only for the constants, no MPI library is linked).
#include <gtest/gtest.h>

#ifdef CKPTFWD_HAVE_MPICH_HEADERS
#include "base/dtype.h"
#include "interpose/mpi/etype_map.h"

namespace ckptfwd::interpose {
namespace {

uint8_t c(DtypeCode d) { return static_cast<uint8_t>(d); }

TEST(InterposeEtypeMap, NumericEtypesMapToTheirDtype) {
  EXPECT_EQ(dtype_code_of_etype(MPI_DOUBLE), c(DtypeCode::kF64LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_REAL8), c(DtypeCode::kF64LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_DOUBLE_PRECISION), c(DtypeCode::kF64LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_FLOAT), c(DtypeCode::kF32LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_REAL), c(DtypeCode::kF32LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_REAL4), c(DtypeCode::kF32LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_INT), c(DtypeCode::kI32LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_INT32_T), c(DtypeCode::kI32LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_INTEGER), c(DtypeCode::kI32LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_UNSIGNED), c(DtypeCode::kU32LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_UINT32_T), c(DtypeCode::kU32LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_LONG), c(DtypeCode::kI64LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_LONG_LONG), c(DtypeCode::kI64LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_LONG_LONG_INT), c(DtypeCode::kI64LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_INT64_T), c(DtypeCode::kI64LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_INTEGER8), c(DtypeCode::kI64LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_UNSIGNED_LONG), c(DtypeCode::kU64LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_UINT64_T), c(DtypeCode::kU64LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_SHORT), c(DtypeCode::kI16LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_INT16_T), c(DtypeCode::kI16LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_UNSIGNED_SHORT), c(DtypeCode::kU16LE));
  EXPECT_EQ(dtype_code_of_etype(MPI_UINT16_T), c(DtypeCode::kU16LE));
}

TEST(InterposeEtypeMap, UntypedAndUnknownEtypesGiveNoHint) {
  EXPECT_EQ(dtype_code_of_etype(MPI_BYTE), 0);
  EXPECT_EQ(dtype_code_of_etype(MPI_CHAR), 0);
  EXPECT_EQ(dtype_code_of_etype(MPI_PACKED), 0);
  EXPECT_EQ(dtype_code_of_etype(MPI_DATATYPE_NULL), 0);
  EXPECT_EQ(dtype_code_of_etype(MPI_DOUBLE_INT), 0);                         // a pair type
  EXPECT_EQ(dtype_code_of_etype(static_cast<MPI_Datatype>(0x8c000001)), 0);  // a derived handle
}

}  // namespace
}  // namespace ckptfwd::interpose
#endif
