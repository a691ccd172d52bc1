/* phdf5_writer DIR: writes DIR/phdf5_ckpt.h5 collectively (layout in phdf5_common.h). */
#include <mpi.h>
#include <string.h>

#include "phdf5_common.h"

static hid_t make_dataset(hid_t group, const char *name, hid_t type, hid_t space, hid_t dcpl, const char *path) {
  hid_t d = H5Dcreate2(group, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5_TRY(d, path);
  return d;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (argc != 2) {
    if (rank == 0) fprintf(stderr, "usage: phdf5_writer DIR\n");
    MPI_Finalize();
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", argv[1], H5NAME);

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5_TRY(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), path);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5_TRY(file, path);

  hsize_t dims[2] = {(hsize_t)NROW * P, NCOL};
  hid_t fspace = H5Screate_simple(2, dims, NULL);
  hid_t group = H5Gcreate2(file, "fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5_TRY(group, path);
  hid_t temp = make_dataset(group, "temperature", H5T_IEEE_F64LE, fspace, H5P_DEFAULT, path);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hsize_t chunk[2] = {NROW, NCOL};
  H5_TRY(H5Pset_chunk(dcpl, 2, chunk), path);
  hid_t ids = make_dataset(group, "ids", H5T_STD_I32LE, fspace, dcpl, path);

  hsize_t start[2] = {(hsize_t)NROW * rank, 0}, count[2] = {NROW, NCOL};
  H5_TRY(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL), path);
  hid_t mspace = H5Screate_simple(2, count, NULL);
  double *t = malloc(sizeof(double) * NROW * NCOL);
  int *id = malloc(sizeof(int) * NROW * NCOL);
  for (long i = 0; i < NROW; i++)
    for (long j = 0; j < NCOL; j++) {
      t[i * NCOL + j] = temperature(NROW * rank + i, j);
      id[i * NCOL + j] = id_of(NROW * rank + i, j);
    }
  hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
  H5_TRY(H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE), path);
  H5_TRY(H5Dwrite(temp, H5T_NATIVE_DOUBLE, mspace, fspace, xfer, t), path);
  H5_TRY(H5Dwrite(ids, H5T_NATIVE_INT, mspace, fspace, xfer, id), path);

  hid_t scalar = H5Screate(H5S_SCALAR);
  long long step = STEP;
  hid_t a = H5Acreate2(group, "step", H5T_STD_I64LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
  H5_TRY(a, path);
  H5_TRY(H5Awrite(a, H5T_NATIVE_LLONG, &step), path);
  H5Aclose(a);
  a = H5Acreate2(file, "nprocs", H5T_STD_I32LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
  H5_TRY(a, path);
  H5_TRY(H5Awrite(a, H5T_NATIVE_INT, &P), path);
  H5Aclose(a);

  H5Sclose(scalar);
  H5Pclose(xfer);
  H5Sclose(mspace);
  H5Pclose(dcpl);
  H5Dclose(ids);
  H5Dclose(temp);
  H5Gclose(group);
  H5Sclose(fspace);
  H5_TRY(H5Fclose(file), path);
  H5Pclose(fapl);
  free(t);
  free(id);
  if (rank == 0) printf("phdf5_writer: wrote %s at %d ranks\n", path, P);
  MPI_Finalize();
  return 0;
}
