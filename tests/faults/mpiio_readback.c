/* mpiio_readback FILE [BLOCKS]: every rank writes its blocks of FILE through a strided view
 * (block k of rank r at byte (k * nprocs + r) * 1024) with MPI_File_write_all, then reads
 * the same blocks back with MPI_File_read_all before closing, and compares. The interleaved
 * accesses make ROMIO's collective buffering pick read aggregators that read other ranks'
 * blocks; under ckptfwd on several nodes an aggregator reads its own node's staged copy,
 * where another node's blocks are not. Exit 1 (and a MISMATCH line) when a rank got other
 * bytes than it wrote. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 1024

static unsigned char byte_of(long off) {
  return (unsigned char)((off * 131 + (off >> 10) * 7 + 1) & 0xff);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: mpiio_readback FILE [BLOCKS]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int blocks = argc > 2 ? atoi(argv[2]) : 256;
  MPI_Datatype filetype;
  MPI_Type_vector(blocks, BLOCK, BLOCK * nprocs, MPI_BYTE, &filetype);
  MPI_Type_commit(&filetype);
  size_t n = (size_t)blocks * BLOCK;
  unsigned char *out = malloc(n), *in = malloc(n);
  for (int k = 0; k < blocks; ++k)
    for (int i = 0; i < BLOCK; ++i)
      out[(size_t)k * BLOCK + i] = byte_of(((long)k * nprocs + rank) * BLOCK + i);
  MPI_File fh;
  int rc =
      MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "rank %d: MPI_File_open %s failed\n", rank, argv[1]);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_File_set_view(fh, (MPI_Offset)rank * BLOCK, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
  MPI_File_write_all(fh, out, (int)n, MPI_BYTE, MPI_STATUS_IGNORE);
  MPI_File_seek(fh, 0, MPI_SEEK_SET);
  memset(in, 0, n);
  MPI_File_read_all(fh, in, (int)n, MPI_BYTE, MPI_STATUS_IGNORE);
  MPI_File_close(&fh);
  long bad = 0, first = -1;
  for (size_t i = 0; i < n; ++i)
    if (in[i] != out[i]) {
      if (first < 0) first = (long)i;
      ++bad;
    }
  if (bad)
    printf("MISMATCH rank %d: %ld of %zu bytes read back differ (first at view byte %ld)\n", rank,
           bad, n, first);
  long total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%s: %ld bytes read back differ\n", total ? "FAIL" : "OK", total);
  free(out);
  free(in);
  MPI_Type_free(&filetype);
  MPI_Finalize();
  return total ? 1 : 0;
}
