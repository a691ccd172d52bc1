/* phdf5_reader DIR: the restart side of phdf5_writer. Opens DIR/phdf5_ckpt.h5 collectively
 * read-only, checks the attributes and the dimensions, reads each rank's hyperslab of both
 * datasets with collective transfers (reading another rank's rows than it wrote) and checks
 * every value. Prints "phdf5_reader: N values ok" or the mismatches; exit 1 on any. */
#include <mpi.h>

#include "phdf5_common.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (argc != 2) {
    if (rank == 0) fprintf(stderr, "usage: phdf5_reader DIR\n");
    MPI_Finalize();
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", argv[1], H5NAME);
  long bad = 0;

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5_TRY(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), path);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  H5_TRY(file, path);

  int nprocs = -1;
  hid_t a = H5Aopen(file, "nprocs", H5P_DEFAULT);
  H5_TRY(a, path);
  H5_TRY(H5Aread(a, H5T_NATIVE_INT, &nprocs), path);
  H5Aclose(a);
  if (nprocs != P) {
    if (rank == 0) fprintf(stderr, "phdf5_reader: %s was written at %d ranks, run at that count (not %d)\n", path, nprocs, P);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  hid_t group = H5Gopen2(file, "fields", H5P_DEFAULT);
  H5_TRY(group, path);
  long long step = 0;
  a = H5Aopen(group, "step", H5P_DEFAULT);
  H5_TRY(a, path);
  H5_TRY(H5Aread(a, H5T_NATIVE_LLONG, &step), path);
  H5Aclose(a);
  if (step != STEP) {
    fprintf(stderr, "MISMATCH rank %d: /fields@step is %lld, expected %lld\n", rank, step, STEP);
    bad++;
  }

  hid_t temp = H5Dopen2(group, "temperature", H5P_DEFAULT);
  hid_t ids = H5Dopen2(group, "ids", H5P_DEFAULT);
  H5_TRY(temp, path);
  H5_TRY(ids, path);
  hid_t fspace = H5Dget_space(temp);
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(fspace, dims, NULL);
  if (dims[0] != (hsize_t)NROW * P || dims[1] != NCOL) {
    fprintf(stderr, "MISMATCH rank %d: temperature is %llux%llu\n", rank, (unsigned long long)dims[0], (unsigned long long)dims[1]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int owner = (rank + 1) % P; /* a restart may map ranks to rows differently */
  hsize_t start[2] = {(hsize_t)NROW * owner, 0}, count[2] = {NROW, NCOL};
  H5_TRY(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL), path);
  hid_t mspace = H5Screate_simple(2, count, NULL);
  hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
  H5_TRY(H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE), path);
  double *t = malloc(sizeof(double) * NROW * NCOL);
  int *id = malloc(sizeof(int) * NROW * NCOL);
  H5_TRY(H5Dread(temp, H5T_NATIVE_DOUBLE, mspace, fspace, xfer, t), path);
  H5_TRY(H5Dread(ids, H5T_NATIVE_INT, mspace, fspace, xfer, id), path);
  for (long i = 0; i < NROW; i++)
    for (long j = 0; j < NCOL; j++) {
      long gi = NROW * owner + i;
      double wt = temperature(gi, j);
      int wi = id_of(gi, j);
      if (t[i * NCOL + j] != wt || id[i * NCOL + j] != wi) {
        if (bad < 5)
          fprintf(stderr, "MISMATCH rank %d (%ld,%ld): temperature %.17g (want %.17g) id %d (want %d)\n", rank, gi, j,
                  t[i * NCOL + j], wt, id[i * NCOL + j], wi);
        bad++;
      }
    }
  free(t);
  free(id);
  H5Pclose(xfer);
  H5Sclose(mspace);
  H5Sclose(fspace);
  H5Dclose(ids);
  H5Dclose(temp);
  H5Gclose(group);
  H5_TRY(H5Fclose(file), path);
  H5Pclose(fapl);

  long total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    if (total)
      printf("phdf5_reader: %ld mismatches in %s\n", total, path);
    else
      printf("phdf5_reader: %ld values ok in %s\n", 2L * NROW * NCOL * P, path);
  }
  MPI_Finalize();
  return total ? 1 : 0;
}
