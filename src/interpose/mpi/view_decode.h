// The global array of an MPI-IO file view (base/view_shape.h), from its filetype's
// envelope as MPI_Type_get_envelope/get_contents give it (MPICH ABI). Pure: the MPI calls
// stay in mpi_wrappers.cc, so this is tested without an MPI library.
//
// Understood: MPI_COMBINER_SUBARRAY (ints: ndims, sizes[], subsizes[], starts[], order)
// and MPI_COMBINER_DARRAY (ints: size, rank, ndims, gsizes[], distribs[], dargs[],
// psizes[], order), each of the view's own etype (old_code == etype_code): the array's
// shape is sizes / gsizes, in C order (an MPI_ORDER_FORTRAN one reversed). Anything else
// (vectors, indexed types, subarrays of derived types, more than kMaxViewDims dimensions)
// has no global array to tell.
#pragma once
#include <mpi.h>

#include <cstdint>

#include "base/view_shape.h"

namespace ckptfwd::interpose {

bool view_shape_of(int combiner, const int* ints, int n_ints, uint8_t old_code, uint8_t etype_code,
                   uint64_t disp, ViewShape* out);

}  // namespace ckptfwd::interpose
