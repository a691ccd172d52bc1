/* Layout shared by phdf5_writer and phdf5_reader (parallel HDF5 over MPICH).
 *
 * DIR/phdf5_ckpt.h5 holds
 *   /fields/temperature  float64 [NROW*P][NCOL], contiguous; rank r owns rows r*NROW..
 *   /fields/ids          int32   [NROW*P][NCOL], chunked NROW x NCOL (one chunk per rank)
 *   attribute /fields@step int64 = STEP, attribute /@nprocs int32 = P
 * written with collective transfers (H5FD_MPIO_COLLECTIVE), each rank one hyperslab. */
#ifndef CKPTFWD_TESTS_MPIIO_PHDF5_COMMON_H
#define CKPTFWD_TESTS_MPIIO_PHDF5_COMMON_H

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

enum { NROW = 32, NCOL = 48 };
#define STEP 1234LL
#define H5NAME "phdf5_ckpt.h5"

static inline double temperature(long i, long j) { return 300.0 + i * 0.5 + j * 0.0625; }
static inline int id_of(long i, long j) { return (int)(i * 100000 + j); }

/* Any HDF5 failure aborts the job: name the call and the file. */
#define H5_TRY(expr, file)                                                                \
  do {                                                                                    \
    if ((expr) < 0) {                                                                     \
      fprintf(stderr, "%s: %s failed on %s (%s:%d)\n", __func__, #expr, (file), __FILE__, \
              __LINE__);                                                                  \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                       \
    }                                                                                     \
  } while (0)

#endif
