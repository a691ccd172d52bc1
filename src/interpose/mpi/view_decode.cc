#include "interpose/mpi/view_decode.h"

namespace ckptfwd::interpose {

bool view_shape_of(int combiner, const int* ints, int n_ints, uint8_t old_code, uint8_t etype_code,
                   uint64_t disp, ViewShape* out) {
  if (etype_code == 0 || old_code != etype_code || n_ints < 1) return false;
  int ndims = 0, first = 0, order_at = 0;
  if (combiner == MPI_COMBINER_SUBARRAY) {
    ndims = ints[0];
    first = 1;
    order_at = 1 + 3 * ndims;
  } else if (combiner == MPI_COMBINER_DARRAY) {
    if (n_ints < 3) return false;
    ndims = ints[2];
    first = 3;
    order_at = 3 + 4 * ndims;
  } else {
    return false;
  }
  if (ndims < 1 || ndims > static_cast<int>(kMaxViewDims) || order_at + 1 != n_ints) return false;
  const int order = ints[order_at];
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) return false;
  ViewShape v;
  v.disp = disp;
  v.dtype = etype_code;
  v.ndims = static_cast<uint32_t>(ndims);
  for (int d = 0; d < ndims; ++d) {
    const int g = ints[first + d];
    if (g <= 0) return false;
    v.gsizes[order == MPI_ORDER_C ? d : ndims - 1 - d] = static_cast<uint64_t>(g);
  }
  uint64_t bytes = 0;
  if (!view_bytes(v, &bytes)) return false;
  *out = v;
  return true;
}

}  // namespace ckptfwd::interpose
