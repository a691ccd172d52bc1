/* Global arrays written through MPI-IO file views, as PnetCDF-style codes write them: each
 * rank's block of a global array through a filetype that carries the array's shape.
 *
 * usage: mpiio_global_arrays DIR   (any number of ranks; 4 in the tests)
 *   DIR/sub2d_c.dat    float64 [6*P0][5*P1], C order, MPI_Type_create_subarray over a
 *                      P0 x P1 process grid, MPI_File_write_all;
 *   DIR/sub3d_f.dat    float32 with Fortran dimensions (4*Q0, 3*Q1, 2*Q2), x fastest:
 *                      a MPI_ORDER_FORTRAN subarray, so the file reads in C order as
 *                      [2*Q2][3*Q1][4*Q0];
 *   DIR/hdr_arrays.dat a 128-byte text header (rank 0, no view), then at 128 an int32
 *                      [8*P0][6*P1] through a block-block MPI_Type_create_darray, then
 *                      right after it a float64 [3*P0][7*P1] through a subarray wrapped by
 *                      MPI_Type_create_resized (lower bound 0), written independently.
 * Element (i, j[, k]) in C order of the file's array holds a function of its global index
 * alone, so a run on any number of ranks writes the same bytes for the same grid. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs;

static void check(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "rank %d: %s failed: %s\n", rank, what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static MPI_File open_file(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  MPI_File fh;
  check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
        path);
  return fh;
}

static void sub2d_c(const char *dir) {
  int dims[2] = {0, 0}, coords[2];
  MPI_Dims_create(nprocs, 2, dims);
  coords[0] = rank / dims[1];
  coords[1] = rank % dims[1];
  int g[2] = {6 * dims[0], 5 * dims[1]}, l[2] = {6, 5}, s[2] = {6 * coords[0], 5 * coords[1]};
  double buf[30];
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 5; ++j) buf[i * 5 + j] = (s[0] + i) * 1000.0 + (s[1] + j) + 0.25;
  MPI_Datatype t;
  MPI_Type_create_subarray(2, g, l, s, MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  MPI_File fh = open_file(dir, "sub2d_c.dat");
  check(MPI_File_set_view(fh, 0, MPI_DOUBLE, t, "native", MPI_INFO_NULL), "set_view sub2d");
  check(MPI_File_write_all(fh, buf, 30, MPI_DOUBLE, MPI_STATUS_IGNORE), "write_all sub2d");
  MPI_File_close(&fh);
  MPI_Type_free(&t);
}

static void sub3d_f(const char *dir) {
  int q[3] = {0, 0, 0};
  MPI_Dims_create(nprocs, 3, q);
  /* Fortran order: dimension 0 (x) varies fastest; rank r's coordinates x-fastest too. */
  int c[3] = {rank % q[0], (rank / q[0]) % q[1], rank / (q[0] * q[1])};
  int l[3] = {4, 3, 2}, g[3] = {4 * q[0], 3 * q[1], 2 * q[2]};
  int s[3] = {4 * c[0], 3 * c[1], 2 * c[2]};
  float buf[24];
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x)
        buf[x + 4 * (y + 3 * z)] = (float)((s[0] + x) + 100 * (s[1] + y) + 10000 * (s[2] + z)) + 0.5f;
  MPI_Datatype t;
  MPI_Type_create_subarray(3, g, l, s, MPI_ORDER_FORTRAN, MPI_FLOAT, &t);
  MPI_Type_commit(&t);
  MPI_File fh = open_file(dir, "sub3d_f.dat");
  check(MPI_File_set_view(fh, 0, MPI_FLOAT, t, "native", MPI_INFO_NULL), "set_view sub3d");
  check(MPI_File_write_all(fh, buf, 24, MPI_FLOAT, MPI_STATUS_IGNORE), "write_all sub3d");
  MPI_File_close(&fh);
  MPI_Type_free(&t);
}

static void hdr_arrays(const char *dir) {
  int dims[2] = {0, 0};
  MPI_Dims_create(nprocs, 2, dims);
  int cr = rank / dims[1], cc = rank % dims[1];
  MPI_File fh = open_file(dir, "hdr_arrays.dat");
  if (rank == 0) {
    char hdr[128];
    memset(hdr, ' ', sizeof hdr);
    snprintf(hdr, sizeof hdr, "GLOBAL ARRAYS v1 grid %dx%d", dims[0], dims[1]);
    check(MPI_File_write_at(fh, 0, hdr, 128, MPI_CHAR, MPI_STATUS_IGNORE), "header");
  }
  /* int32 [8*P0][6*P1], block-block darray. */
  int g[2] = {8 * dims[0], 6 * dims[1]};
  int distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
  int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
  MPI_Datatype t;
  MPI_Type_create_darray(nprocs, rank, 2, g, distribs, dargs, dims, MPI_ORDER_C, MPI_INT, &t);
  MPI_Type_commit(&t);
  int ibuf[48];
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 6; ++j) ibuf[i * 6 + j] = (8 * cr + i) * 100 - (6 * cc + j);
  check(MPI_File_set_view(fh, 128, MPI_INT, t, "native", MPI_INFO_NULL), "set_view darray");
  check(MPI_File_write_all(fh, ibuf, 48, MPI_INT, MPI_STATUS_IGNORE), "write_all darray");
  MPI_Type_free(&t);
  /* float64 [3*P0][7*P1] right after, a resized subarray, independent writes. */
  MPI_Offset disp = 128 + (MPI_Offset)g[0] * g[1] * 4;
  int g2[2] = {3 * dims[0], 7 * dims[1]}, l2[2] = {3, 7}, s2[2] = {3 * cr, 7 * cc};
  MPI_Datatype sub, t2;
  MPI_Type_create_subarray(2, g2, l2, s2, MPI_ORDER_C, MPI_DOUBLE, &sub);
  MPI_Type_create_resized(sub, 0, (MPI_Aint)g2[0] * g2[1] * 8, &t2);
  MPI_Type_commit(&t2);
  double dbuf[21];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 7; ++j) dbuf[i * 7 + j] = -((s2[0] + i) * 10.0 + (s2[1] + j)) / 3.0;
  check(MPI_File_set_view(fh, disp, MPI_DOUBLE, t2, "native", MPI_INFO_NULL), "set_view resized");
  check(MPI_File_write(fh, dbuf, 21, MPI_DOUBLE, MPI_STATUS_IGNORE), "write resized");
  MPI_File_close(&fh);
  MPI_Type_free(&sub);
  MPI_Type_free(&t2);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (argc != 2) {
    if (rank == 0) fprintf(stderr, "usage: mpiio_global_arrays DIR\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  sub2d_c(argv[1]);
  sub3d_f(argv[1]);
  hdr_arrays(argv[1]);
  MPI_Finalize();
  return 0;
}
