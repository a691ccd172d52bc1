/* sync_visible.dat: MPI's sync-barrier-sync consistency on one open N->1 file. Each rank
 * writes its block, then MPI_File_sync, MPI_Barrier, MPI_File_sync, and reads the block its
 * neighbour wrote (with ranks split over two nodes, rank n/2-1's neighbour lives on the
 * other node) through the same handle; twice, the second round overwriting the first
 * round's neighbour block. MPI guarantees those reads see the neighbour's bytes. */
#include <stdlib.h>

#include "mpiio_patterns.h"

enum { FID_SYNC = 10, SV_B = 4096, SV_ROUNDS = 2 };

static MPI_Offset sv_off(int round, int rank, int nprocs) {
  return (MPI_Offset)(round * nprocs + rank) * SV_B;
}

/* Round 1 writes its own block at (1, rank) and overwrites (0, rank) too, with the
 * content of FID_SYNC + 1, so a stale copy of round 0 is a mismatch. */
static int sv_fid(int round, int block_round) { return block_round == 0 && round == 1 ? FID_SYNC + 1 : FID_SYNC; }

void write_sync_visible(struct ctx *c) {
  const char *n = "sync_visible.dat";
  const char *path = path_in(c, n, 0);
  MPI_File fh;
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), path);
  unsigned char *b = xmalloc(SV_B);
  int q = (c->rank + 1) % c->nprocs;
  for (int round = 0; round < SV_ROUNDS; round++) {
    for (int br = 0; br <= round; br++) {
      MPI_Offset off = sv_off(br, c->rank, c->nprocs);
      content_fill(sv_fid(round, br), off, b, SV_B);
      CHECK_MPI(MPI_File_write_at(fh, off, b, SV_B, MPI_BYTE, MPI_STATUS_IGNORE), n);
    }
    CHECK_MPI(MPI_File_sync(fh), n);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh), n);
    for (int br = 0; br <= round; br++) {
      MPI_Offset off = sv_off(br, q, c->nprocs);
      CHECK_MPI(MPI_File_read_at(fh, off, b, SV_B, MPI_BYTE, MPI_STATUS_IGNORE), n);
      expect_content(c, n, sv_fid(round, br), off, b, SV_B);
    }
    /* Nobody writes the next round before every rank has read this one. */
    MPI_Barrier(MPI_COMM_WORLD);
  }
  free(b);
  CHECK_MPI(MPI_File_close(&fh), n);
}

void read_sync_visible(struct ctx *c) {
  const char *n = "sync_visible.dat";
  const char *path = path_in(c, n, 0);
  MPI_File fh;
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), path);
  unsigned char *b = xmalloc(SV_B);
  int q = (c->rank + 1) % c->nprocs;
  for (int br = 0; br < SV_ROUNDS; br++) {
    MPI_Offset off = sv_off(br, q, c->nprocs);
    CHECK_MPI(MPI_File_read_at(fh, off, b, SV_B, MPI_BYTE, MPI_STATUS_IGNORE), n);
    expect_content(c, n, sv_fid(SV_ROUNDS - 1, br), off, b, SV_B);
  }
  expect_size(c, n, fh, (MPI_Offset)SV_ROUNDS * c->nprocs * SV_B);
  free(b);
  CHECK_MPI(MPI_File_close(&fh), n);
}
