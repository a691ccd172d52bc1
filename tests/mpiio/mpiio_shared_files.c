/* N->1 files (MPI_COMM_WORLD) written as plain byte streams through every positioning
 * style: explicit offsets, individual and shared file pointers, split collectives,
 * non-blocking requests, preallocation and set_size. Layouts depend on the rank count, so
 * a read run must use the rank count of the write run. */
#include <stdio.h>
#include <stdlib.h>

#include "mpiio_patterns.h"

enum {
  FID_INDEP = 1,
  FID_COLL = 2,
  FID_FP = 3,
  FID_SHARED = 4,
  FID_SPLIT = 5,
  FID_NB = 6,
  FID_PREALLOC = 9,
};

static MPI_File open_world(struct ctx *c, const char *name, int amode) {
  MPI_File fh;
  const char *path = path_in(c, name, 0);
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh), path);
  return fh;
}
#define WMODE (MPI_MODE_CREATE | MPI_MODE_WRONLY)
#define RMODE MPI_MODE_RDONLY

/* Fills a fresh buffer with the content of [off, off+len) of FID. */
static unsigned char *content(int fid, MPI_Offset off, int len) {
  unsigned char *b = xmalloc((size_t)len);
  content_fill(fid, off, b, (size_t)len);
  return b;
}

/* --- indep_at.dat: independent write_at, interleaved blocks, then set_size grows a hole --- */
enum { IA_B = 3000, IA_K = 4, IA_TAIL = 1000 };

void write_indep_at(struct ctx *c) {
  const char *n = "indep_at.dat";
  MPI_File fh = open_world(c, n, WMODE);
  for (int k = 0; k < IA_K; k++) {
    MPI_Offset off = (MPI_Offset)(k * c->nprocs + c->rank) * IA_B;
    unsigned char *b = content(FID_INDEP, off, IA_B);
    CHECK_MPI(MPI_File_write_at(fh, off, b, IA_B, MPI_BYTE, MPI_STATUS_IGNORE), n);
    free(b);
  }
  CHECK_MPI(MPI_File_set_size(fh, (MPI_Offset)c->nprocs * IA_K * IA_B + IA_TAIL), n);
  CHECK_MPI(MPI_File_close(&fh), n);
}

void read_indep_at(struct ctx *c) {
  const char *n = "indep_at.dat";
  MPI_File fh = open_world(c, n, RMODE);
  int q = (c->rank + 1) % c->nprocs; /* read what a neighbour wrote */
  unsigned char *b = xmalloc(IA_B > IA_TAIL ? IA_B : IA_TAIL);
  for (int k = 0; k < IA_K; k++) {
    MPI_Offset off = (MPI_Offset)(k * c->nprocs + q) * IA_B;
    CHECK_MPI(MPI_File_read_at(fh, off, b, IA_B, MPI_BYTE, MPI_STATUS_IGNORE), n);
    expect_content(c, n, FID_INDEP, off, b, IA_B);
  }
  MPI_Offset tail = (MPI_Offset)c->nprocs * IA_K * IA_B;
  CHECK_MPI(MPI_File_read_at(fh, tail, b, IA_TAIL, MPI_BYTE, MPI_STATUS_IGNORE), n);
  expect_zero(c, n, tail, b, IA_TAIL);
  expect_size(c, n, fh, tail + IA_TAIL);
  free(b);
  CHECK_MPI(MPI_File_close(&fh), n);
}

/* --- coll_at.dat: write_at_all, contiguous pieces of different lengths --- */
static int coll_len(int r) { return 5000 + 17 * r; }
static MPI_Offset coll_off(int r) { return (MPI_Offset)5000 * r + 17LL * r * (r - 1) / 2; }

/* Opened with ROMIO's explicit "ufs:" prefix, as codes that pick their driver do. */
void write_coll_at(struct ctx *c) {
  const char *n = "coll_at.dat";
  char prefixed[4200];
  snprintf(prefixed, sizeof prefixed, "ufs:%s", path_in(c, n, 0));
  MPI_File fh;
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, prefixed, WMODE, MPI_INFO_NULL, &fh), prefixed);
  unsigned char *b = content(FID_COLL, coll_off(c->rank), coll_len(c->rank));
  CHECK_MPI(MPI_File_write_at_all(fh, coll_off(c->rank), b, coll_len(c->rank), MPI_BYTE, MPI_STATUS_IGNORE), n);
  free(b);
  CHECK_MPI(MPI_File_close(&fh), n);
}

void read_coll_at(struct ctx *c) {
  const char *n = "coll_at.dat";
  MPI_File fh = open_world(c, n, RMODE);
  unsigned char *b = xmalloc(coll_len(c->rank));
  CHECK_MPI(MPI_File_read_at_all(fh, coll_off(c->rank), b, coll_len(c->rank), MPI_BYTE, MPI_STATUS_IGNORE), n);
  expect_content(c, n, FID_COLL, coll_off(c->rank), b, coll_len(c->rank));
  expect_size(c, n, fh, coll_off(c->nprocs));
  free(b);
  CHECK_MPI(MPI_File_close(&fh), n);
}

/* --- file_ptr.dat: individual file pointers, seek + write twice, then seek + write_all --- */
enum { FP_B = 4096, FP_FIRST = 1948 };

void write_file_ptr(struct ctx *c) {
  const char *n = "file_ptr.dat";
  MPI_File fh = open_world(c, n, WMODE);
  MPI_Offset off = (MPI_Offset)c->rank * FP_B;
  unsigned char *b = content(FID_FP, off, FP_B);
  CHECK_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET), n);
  CHECK_MPI(MPI_File_write(fh, b, FP_FIRST, MPI_BYTE, MPI_STATUS_IGNORE), n);
  CHECK_MPI(MPI_File_write(fh, b + FP_FIRST, FP_B - FP_FIRST, MPI_BYTE, MPI_STATUS_IGNORE), n);
  free(b);
  off += (MPI_Offset)c->nprocs * FP_B;
  b = content(FID_FP, off, FP_B);
  CHECK_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET), n);
  CHECK_MPI(MPI_File_write_all(fh, b, FP_B, MPI_BYTE, MPI_STATUS_IGNORE), n);
  free(b);
  CHECK_MPI(MPI_File_close(&fh), n);
}

void read_file_ptr(struct ctx *c) {
  const char *n = "file_ptr.dat";
  MPI_File fh = open_world(c, n, RMODE);
  MPI_Offset off = (MPI_Offset)c->rank * FP_B;
  unsigned char *b = xmalloc(FP_B);
  CHECK_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET), n);
  CHECK_MPI(MPI_File_read(fh, b, FP_FIRST, MPI_BYTE, MPI_STATUS_IGNORE), n);
  CHECK_MPI(MPI_File_read(fh, b + FP_FIRST, FP_B - FP_FIRST, MPI_BYTE, MPI_STATUS_IGNORE), n);
  expect_content(c, n, FID_FP, off, b, FP_B);
  off += (MPI_Offset)c->nprocs * FP_B;
  CHECK_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET), n);
  CHECK_MPI(MPI_File_read_all(fh, b, FP_B, MPI_BYTE, MPI_STATUS_IGNORE), n);
  expect_content(c, n, FID_FP, off, b, FP_B);
  expect_size(c, n, fh, 2LL * c->nprocs * FP_B);
  free(b);
  CHECK_MPI(MPI_File_close(&fh), n);
}

/* --- shared_ptr.dat: write_shared in rank turns (deterministic order), then write_ordered.
 * ROMIO keeps the shared pointer in a hidden file next to this one (.shared_ptr.dat.shfp.*),
 * locked with fcntl and removed at close. --- */
static int sh_len(int r) { return 1000 + 10 * r; }
static int ord_len(int r) { return 2000 + 7 * r; }
static MPI_Offset sh_off(int r) { return 1000LL * r + 10LL * r * (r - 1) / 2; }
static MPI_Offset ord_off(int P, int r) { return sh_off(P) + 2000LL * r + 7LL * r * (r - 1) / 2; }

void write_shared_ptr(struct ctx *c) {
  const char *n = "shared_ptr.dat";
  MPI_File fh = open_world(c, n, WMODE);
  for (int t = 0; t < c->nprocs; t++) {
    if (t == c->rank) {
      unsigned char *b = content(FID_SHARED, sh_off(t), sh_len(t));
      CHECK_MPI(MPI_File_write_shared(fh, b, sh_len(t), MPI_BYTE, MPI_STATUS_IGNORE), n);
      free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  unsigned char *b = content(FID_SHARED, ord_off(c->nprocs, c->rank), ord_len(c->rank));
  CHECK_MPI(MPI_File_write_ordered(fh, b, ord_len(c->rank), MPI_BYTE, MPI_STATUS_IGNORE), n);
  free(b);
  CHECK_MPI(MPI_File_close(&fh), n);
}

void read_shared_ptr(struct ctx *c) {
  const char *n = "shared_ptr.dat";
  MPI_File fh = open_world(c, n, RMODE);
  CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), n);
  for (int t = 0; t < c->nprocs; t++) {
    if (t == c->rank) {
      unsigned char *b = xmalloc(sh_len(t));
      CHECK_MPI(MPI_File_read_shared(fh, b, sh_len(t), MPI_BYTE, MPI_STATUS_IGNORE), n);
      expect_content(c, n, FID_SHARED, sh_off(t), b, sh_len(t));
      free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  unsigned char *b = xmalloc(ord_len(c->rank));
  CHECK_MPI(MPI_File_read_ordered(fh, b, ord_len(c->rank), MPI_BYTE, MPI_STATUS_IGNORE), n);
  expect_content(c, n, FID_SHARED, ord_off(c->nprocs, c->rank), b, ord_len(c->rank));
  free(b);
  expect_size(c, n, fh, ord_off(c->nprocs, c->nprocs));
  CHECK_MPI(MPI_File_close(&fh), n);
}

/* --- split.dat: split collectives: write_at_all_begin/end, write_all_begin/end under a
 * per-rank view displacement, write_ordered_begin/end after seek_shared --- */
enum { SP_B1 = 2500, SP_B2 = 3100 };
static int sp_len3(int r) { return 1500 + r; }
static MPI_Offset sp_r2(int P) { return (MPI_Offset)P * SP_B1; }
static MPI_Offset sp_r3(int P) { return sp_r2(P) + (MPI_Offset)P * SP_B2; }
static MPI_Offset sp_off3(int P, int r) { return sp_r3(P) + 1500LL * r + (MPI_Offset)r * (r - 1) / 2; }

void write_split(struct ctx *c) {
  const char *n = "split.dat";
  int P = c->nprocs, r = c->rank;
  MPI_File fh = open_world(c, n, WMODE);
  unsigned char *b = content(FID_SPLIT, (MPI_Offset)r * SP_B1, SP_B1);
  CHECK_MPI(MPI_File_write_at_all_begin(fh, (MPI_Offset)r * SP_B1, b, SP_B1, MPI_BYTE), n);
  CHECK_MPI(MPI_File_write_at_all_end(fh, b, MPI_STATUS_IGNORE), n);
  free(b);

  MPI_Offset d2 = sp_r2(P) + (MPI_Offset)r * SP_B2;
  CHECK_MPI(MPI_File_set_view(fh, d2, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), n);
  b = content(FID_SPLIT, d2, SP_B2);
  CHECK_MPI(MPI_File_write_all_begin(fh, b, SP_B2, MPI_BYTE), n);
  CHECK_MPI(MPI_File_write_all_end(fh, b, MPI_STATUS_IGNORE), n);
  free(b);

  CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), n);
  CHECK_MPI(MPI_File_seek_shared(fh, sp_r3(P), MPI_SEEK_SET), n);
  b = content(FID_SPLIT, sp_off3(P, r), sp_len3(r));
  CHECK_MPI(MPI_File_write_ordered_begin(fh, b, sp_len3(r), MPI_BYTE), n);
  CHECK_MPI(MPI_File_write_ordered_end(fh, b, MPI_STATUS_IGNORE), n);
  free(b);
  CHECK_MPI(MPI_File_close(&fh), n);
}

void read_split(struct ctx *c) {
  const char *n = "split.dat";
  int P = c->nprocs, r = c->rank;
  MPI_File fh = open_world(c, n, RMODE);
  unsigned char *b = xmalloc(SP_B2 > SP_B1 ? SP_B2 : SP_B1);
  CHECK_MPI(MPI_File_read_at_all_begin(fh, (MPI_Offset)r * SP_B1, b, SP_B1, MPI_BYTE), n);
  CHECK_MPI(MPI_File_read_at_all_end(fh, b, MPI_STATUS_IGNORE), n);
  expect_content(c, n, FID_SPLIT, (MPI_Offset)r * SP_B1, b, SP_B1);

  MPI_Offset d2 = sp_r2(P) + (MPI_Offset)r * SP_B2;
  CHECK_MPI(MPI_File_set_view(fh, d2, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), n);
  CHECK_MPI(MPI_File_read_all_begin(fh, b, SP_B2, MPI_BYTE), n);
  CHECK_MPI(MPI_File_read_all_end(fh, b, MPI_STATUS_IGNORE), n);
  expect_content(c, n, FID_SPLIT, d2, b, SP_B2);
  free(b);

  CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), n);
  CHECK_MPI(MPI_File_seek_shared(fh, sp_r3(P), MPI_SEEK_SET), n);
  b = xmalloc(sp_len3(r));
  CHECK_MPI(MPI_File_read_ordered_begin(fh, b, sp_len3(r), MPI_BYTE), n);
  CHECK_MPI(MPI_File_read_ordered_end(fh, b, MPI_STATUS_IGNORE), n);
  expect_content(c, n, FID_SPLIT, sp_off3(P, r), b, sp_len3(r));
  free(b);
  expect_size(c, n, fh, sp_off3(P, P));
  CHECK_MPI(MPI_File_close(&fh), n);
}

/* --- nonblocking.dat: five regions of P*NB_B bytes: iwrite_at (two requests + Waitall),
 * iwrite after seek, iwrite_at_all, iwrite_shared in rank turns, iwrite_all after seek --- */
enum { NB_B = 2048 };
static int nbs_len(int r) { return 700 + r; }
static MPI_Offset nbs_off(int P, int r) { return 3LL * P * NB_B + 700LL * r + (MPI_Offset)r * (r - 1) / 2; }

void write_nonblocking(struct ctx *c) {
  const char *n = "nonblocking.dat";
  int P = c->nprocs, r = c->rank;
  MPI_File fh = open_world(c, n, WMODE);
  MPI_Request req[2];
  MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: GCC 12 flags it as a zero-size array */
  MPI_Offset off = (MPI_Offset)r * NB_B;
  unsigned char *b = content(FID_NB, off, NB_B);
  CHECK_MPI(MPI_File_iwrite_at(fh, off, b, NB_B / 2, MPI_BYTE, &req[0]), n);
  CHECK_MPI(MPI_File_iwrite_at(fh, off + NB_B / 2, b + NB_B / 2, NB_B / 2, MPI_BYTE, &req[1]), n);
  CHECK_MPI(MPI_Waitall(2, req, st), n);
  free(b);

  off += (MPI_Offset)P * NB_B;
  b = content(FID_NB, off, NB_B);
  CHECK_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET), n);
  CHECK_MPI(MPI_File_iwrite(fh, b, NB_B, MPI_BYTE, &req[0]), n);
  CHECK_MPI(MPI_Wait(&req[0], MPI_STATUS_IGNORE), n);
  free(b);

  off += (MPI_Offset)P * NB_B;
  b = content(FID_NB, off, NB_B);
  CHECK_MPI(MPI_File_iwrite_at_all(fh, off, b, NB_B, MPI_BYTE, &req[0]), n);
  CHECK_MPI(MPI_Wait(&req[0], MPI_STATUS_IGNORE), n);
  free(b);

  CHECK_MPI(MPI_File_seek_shared(fh, 3LL * P * NB_B, MPI_SEEK_SET), n);
  for (int t = 0; t < P; t++) {
    if (t == r) {
      b = content(FID_NB, nbs_off(P, r), nbs_len(r));
      CHECK_MPI(MPI_File_iwrite_shared(fh, b, nbs_len(r), MPI_BYTE, &req[0]), n);
      CHECK_MPI(MPI_Wait(&req[0], MPI_STATUS_IGNORE), n);
      free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  off = 4LL * P * NB_B + (MPI_Offset)r * NB_B;
  b = content(FID_NB, off, NB_B);
  CHECK_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET), n);
  CHECK_MPI(MPI_File_iwrite_all(fh, b, NB_B, MPI_BYTE, &req[0]), n);
  CHECK_MPI(MPI_Wait(&req[0], MPI_STATUS_IGNORE), n);
  free(b);
  CHECK_MPI(MPI_File_close(&fh), n);
}

void read_nonblocking(struct ctx *c) {
  const char *n = "nonblocking.dat";
  int P = c->nprocs, r = c->rank;
  MPI_File fh = open_world(c, n, RMODE);
  MPI_Request req[2];
  MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: GCC 12 flags it as a zero-size array */
  unsigned char *b = xmalloc(NB_B);
  MPI_Offset off = (MPI_Offset)r * NB_B;
  CHECK_MPI(MPI_File_iread_at(fh, off, b, NB_B / 2, MPI_BYTE, &req[0]), n);
  CHECK_MPI(MPI_File_iread_at(fh, off + NB_B / 2, b + NB_B / 2, NB_B / 2, MPI_BYTE, &req[1]), n);
  CHECK_MPI(MPI_Waitall(2, req, st), n);
  expect_content(c, n, FID_NB, off, b, NB_B);

  off += (MPI_Offset)P * NB_B;
  CHECK_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET), n);
  CHECK_MPI(MPI_File_iread(fh, b, NB_B, MPI_BYTE, &req[0]), n);
  CHECK_MPI(MPI_Wait(&req[0], MPI_STATUS_IGNORE), n);
  expect_content(c, n, FID_NB, off, b, NB_B);

  off += (MPI_Offset)P * NB_B;
  CHECK_MPI(MPI_File_iread_at_all(fh, off, b, NB_B, MPI_BYTE, &req[0]), n);
  CHECK_MPI(MPI_Wait(&req[0], MPI_STATUS_IGNORE), n);
  expect_content(c, n, FID_NB, off, b, NB_B);

  CHECK_MPI(MPI_File_seek_shared(fh, 3LL * P * NB_B, MPI_SEEK_SET), n);
  for (int t = 0; t < P; t++) {
    if (t == r) {
      CHECK_MPI(MPI_File_iread_shared(fh, b, nbs_len(r), MPI_BYTE, &req[0]), n);
      CHECK_MPI(MPI_Wait(&req[0], MPI_STATUS_IGNORE), n);
      expect_content(c, n, FID_NB, nbs_off(P, r), b, nbs_len(r));
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  off = 4LL * P * NB_B + (MPI_Offset)r * NB_B;
  CHECK_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET), n);
  CHECK_MPI(MPI_File_iread_all(fh, b, NB_B, MPI_BYTE, &req[0]), n);
  CHECK_MPI(MPI_Wait(&req[0], MPI_STATUS_IGNORE), n);
  expect_content(c, n, FID_NB, off, b, NB_B);
  free(b);
  expect_size(c, n, fh, 5LL * P * NB_B);
  CHECK_MPI(MPI_File_close(&fh), n);
}

/* --- prealloc.dat: MPI_File_preallocate, then small pieces inside the preallocated range --- */
enum { PA_B = 8192 };
static int pa_len(int r) { return 1000 + r; }

void write_prealloc(struct ctx *c) {
  const char *n = "prealloc.dat";
  MPI_File fh = open_world(c, n, WMODE);
  CHECK_MPI(MPI_File_preallocate(fh, (MPI_Offset)c->nprocs * PA_B), n);
  MPI_Offset off = (MPI_Offset)c->rank * PA_B;
  unsigned char *b = content(FID_PREALLOC, off, pa_len(c->rank));
  CHECK_MPI(MPI_File_write_at(fh, off, b, pa_len(c->rank), MPI_BYTE, MPI_STATUS_IGNORE), n);
  free(b);
  CHECK_MPI(MPI_File_close(&fh), n);
}

void read_prealloc(struct ctx *c) {
  const char *n = "prealloc.dat";
  MPI_File fh = open_world(c, n, RMODE);
  MPI_Offset off = (MPI_Offset)c->rank * PA_B;
  unsigned char *b = xmalloc(PA_B);
  CHECK_MPI(MPI_File_read_at(fh, off, b, PA_B, MPI_BYTE, MPI_STATUS_IGNORE), n);
  expect_content(c, n, FID_PREALLOC, off, b, pa_len(c->rank));
  expect_zero(c, n, off + pa_len(c->rank), b + pa_len(c->rank), PA_B - pa_len(c->rank));
  free(b);
  expect_size(c, n, fh, (MPI_Offset)c->nprocs * PA_B);
  CHECK_MPI(MPI_File_close(&fh), n);
}
