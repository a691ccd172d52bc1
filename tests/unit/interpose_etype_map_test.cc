// The etype of an MPI-IO file view -> the dtype hint of the bytes written through it, and
// its filetype's envelope -> the global array (MPICH ABI; mpi.h only for the constants, no
// MPI library is linked).
#include <gtest/gtest.h>

#ifdef CKPTFWD_HAVE_MPICH_HEADERS
#include "base/dtype.h"
#include "interpose/mpi/etype_map.h"
#include "interpose/mpi/view_decode.h"

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

// The global array of a filetype's envelope: subarray and darray of the etype, C order
// as is, Fortran order reversed; anything else, none.
TEST(InterposeViewDecode, SubarrayAndDarrayGiveTheGlobalArray) {
  const uint8_t f64 = c(DtypeCode::kF64LE), i32 = c(DtypeCode::kI32LE);
  ViewShape v;
  // subarray: ndims, sizes, subsizes, starts, order
  const int sub[] = {2, 12, 10, 6, 5, 6, 0, MPI_ORDER_C};
  ASSERT_TRUE(view_shape_of(MPI_COMBINER_SUBARRAY, sub, 8, f64, f64, 64, &v));
  EXPECT_EQ(v.disp, 64u);
  EXPECT_EQ(v.dtype, f64);
  ASSERT_EQ(v.ndims, 2u);
  EXPECT_EQ(v.gsizes[0], 12u);
  EXPECT_EQ(v.gsizes[1], 10u);
  const int fsub[] = {3, 8, 6, 2, 4, 3, 2, 0, 0, 0, MPI_ORDER_FORTRAN};
  ASSERT_TRUE(view_shape_of(MPI_COMBINER_SUBARRAY, fsub, 11, f64, f64, 0, &v));
  EXPECT_EQ(v.gsizes[0], 2u);  // C order: the Fortran dimensions reversed
  EXPECT_EQ(v.gsizes[2], 8u);
  // darray: size, rank, ndims, gsizes, distribs, dargs, psizes, order
  const int dar[] = {4,
                     1,
                     2,
                     16,
                     12,
                     MPI_DISTRIBUTE_BLOCK,
                     MPI_DISTRIBUTE_BLOCK,
                     MPI_DISTRIBUTE_DFLT_DARG,
                     MPI_DISTRIBUTE_DFLT_DARG,
                     2,
                     2,
                     MPI_ORDER_C};
  ASSERT_TRUE(view_shape_of(MPI_COMBINER_DARRAY, dar, 12, i32, i32, 128, &v));
  EXPECT_EQ(v.gsizes[0], 16u);
  EXPECT_EQ(v.gsizes[1], 12u);
  // Not of the etype, a wrong count, a bad order, a zero or negative size, a vector.
  EXPECT_FALSE(view_shape_of(MPI_COMBINER_SUBARRAY, sub, 8, i32, f64, 0, &v));
  EXPECT_FALSE(view_shape_of(MPI_COMBINER_SUBARRAY, sub, 7, f64, f64, 0, &v));
  const int bad_order[] = {2, 12, 10, 6, 5, 6, 0, 12345};
  EXPECT_FALSE(view_shape_of(MPI_COMBINER_SUBARRAY, bad_order, 8, f64, f64, 0, &v));
  const int zero[] = {2, 0, 10, 0, 5, 0, 0, MPI_ORDER_C};
  EXPECT_FALSE(view_shape_of(MPI_COMBINER_SUBARRAY, zero, 8, f64, f64, 0, &v));
  const int many[] = {9, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_FALSE(view_shape_of(MPI_COMBINER_SUBARRAY, many, 10, f64, f64, 0, &v));
  const int vec[] = {4, 1, 10};
  EXPECT_FALSE(view_shape_of(MPI_COMBINER_VECTOR, vec, 3, f64, f64, 0, &v));
  const int huge[] = {2, 2147483647, 2147483647, 1, 1, 0, 0, MPI_ORDER_C};
  // (2^31 - 1)^2 doubles: more than 2^64 bytes.
  EXPECT_FALSE(view_shape_of(MPI_COMBINER_SUBARRAY, huge, 8, f64, f64, 0, &v));
}

}  // namespace
}  // namespace ckptfwd::interpose
#endif
