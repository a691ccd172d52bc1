// The DtypeCode (base/dtype.h) an MPI-IO file view's etype stands for, MPICH ABI.
// Only predefined fixed-layout numeric types map; MPI_BYTE, MPI_CHAR, derived types and
// anything unknown are kBytes (no hint): a wrong hint would only cost compression, but a
// hint on bytes that are not one array of one type is worth nothing.
#pragma once
#include <mpi.h>

#include <cstdint>

namespace ckptfwd::interpose {

uint8_t dtype_code_of_etype(MPI_Datatype etype);

}  // namespace ckptfwd::interpose
