/* Files written through file views.
 *
 * subarray.dat: a 256-byte text header (rank 0, default view), then two 2-D arrays of
 * MPI_DOUBLE decomposed over a 2-D process grid: variable 0 with write_all from a memory
 * subarray (the interior of a halo'd local block), variable 1 with independent writes
 * (non-contiguous, so ROMIO data-sieves: read-modify-write under fcntl locks).
 *
 * hints.dat: opened with cb_nodes=2, cb_buffer_size=16384, romio_cb_write=enable,
 * romio_ds_write=enable. Region A: independent writes through an interleaved vector view
 * (data sieving); region B: write_all through another interleaved view (two-phase
 * collective buffering with 2 aggregators and many rounds); then MPI_File_sync. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiio_patterns.h"

enum { FID_HINTS = 8 };
enum { HDR = 256, LX = 16, LY = 12 };

struct grid {
  int dims[2], coords[2];
  int gnx, gny;
};

static struct grid grid_of(const struct ctx *c) {
  struct grid g = {{0, 0}, {0, 0}, 0, 0};
  MPI_Dims_create(c->nprocs, 2, g.dims);
  g.coords[0] = c->rank / g.dims[1];
  g.coords[1] = c->rank % g.dims[1];
  g.gnx = LX * g.dims[0];
  g.gny = LY * g.dims[1];
  return g;
}

static MPI_Datatype file_block(const struct grid *g) {
  int sizes[2] = {g->gnx, g->gny}, sub[2] = {LX, LY};
  int starts[2] = {g->coords[0] * LX, g->coords[1] * LY};
  MPI_Datatype t;
  MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  return t;
}

static MPI_Datatype halo_interior(void) {
  int sizes[2] = {LX + 2, LY + 2}, sub[2] = {LX, LY}, starts[2] = {1, 1};
  MPI_Datatype t;
  MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  return t;
}

static void header_text(const struct grid *g, char *hdr) {
  memset(hdr, 0, HDR);
  snprintf(hdr, HDR, "CKPTFWD-SUBARRAY v1 gnx=%d gny=%d vars=2 dtype=float64le\n", g->gnx, g->gny);
}

static MPI_Offset var_disp(const struct grid *g, int var) {
  return HDR + (MPI_Offset)var * g->gnx * g->gny * (MPI_Offset)sizeof(double);
}

static const double HALO = -7.0;

void write_subarray(struct ctx *c) {
  const char *n = "subarray.dat";
  const char *path = path_in(c, n, 0);
  struct grid g = grid_of(c);
  MPI_File fh;
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), path);
  if (c->rank == 0) {
    char hdr[HDR];
    header_text(&g, hdr);
    CHECK_MPI(MPI_File_write_at(fh, 0, hdr, HDR, MPI_BYTE, MPI_STATUS_IGNORE), n);
  }
  MPI_Datatype ft = file_block(&g), mt = halo_interior();

  double *halo = xmalloc(sizeof(double) * (LX + 2) * (LY + 2));
  for (int i = 0; i < LX + 2; i++)
    for (int j = 0; j < LY + 2; j++)
      halo[i * (LY + 2) + j] = (i == 0 || j == 0 || i == LX + 1 || j == LY + 1)
                                   ? HALO
                                   : content_double(0, g.coords[0] * LX + i - 1, g.coords[1] * LY + j - 1);
  CHECK_MPI(MPI_File_set_view(fh, var_disp(&g, 0), MPI_DOUBLE, ft, "native", MPI_INFO_NULL), n);
  CHECK_MPI(MPI_File_write_all(fh, halo, 1, mt, MPI_STATUS_IGNORE), n);

  double *plain = xmalloc(sizeof(double) * LX * LY);
  for (int i = 0; i < LX; i++)
    for (int j = 0; j < LY; j++) plain[i * LY + j] = content_double(1, g.coords[0] * LX + i, g.coords[1] * LY + j);
  CHECK_MPI(MPI_File_set_view(fh, var_disp(&g, 1), MPI_DOUBLE, ft, "native", MPI_INFO_NULL), n);
  CHECK_MPI(MPI_File_write(fh, plain, LX * LY, MPI_DOUBLE, MPI_STATUS_IGNORE), n);

  free(halo);
  free(plain);
  MPI_Type_free(&ft);
  MPI_Type_free(&mt);
  CHECK_MPI(MPI_File_close(&fh), n);
}

static void expect_double(struct ctx *c, const char *n, int var, long i, long j, double got, double want) {
  if (got == want) return;
  if (c->mismatches < 5)
    fprintf(stderr, "MISMATCH rank %d %s var %d (%ld,%ld): expected %.17g got %.17g\n", c->rank, n, var, i, j, want, got);
  c->mismatches++;
}

void read_subarray(struct ctx *c) {
  const char *n = "subarray.dat";
  const char *path = path_in(c, n, 0);
  struct grid g = grid_of(c);
  MPI_File fh;
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), path);
  char hdr[HDR], want[HDR];
  header_text(&g, want);
  CHECK_MPI(MPI_File_read_at_all(fh, 0, hdr, HDR, MPI_BYTE, MPI_STATUS_IGNORE), n);
  if (memcmp(hdr, want, HDR) != 0) {
    fprintf(stderr, "MISMATCH rank %d %s: header is not \"%.60s\"\n", c->rank, n, want);
    c->mismatches++;
  }
  MPI_Datatype ft = file_block(&g), mt = halo_interior();
  double *halo = xmalloc(sizeof(double) * (LX + 2) * (LY + 2));
  for (int k = 0; k < (LX + 2) * (LY + 2); k++) halo[k] = HALO;
  CHECK_MPI(MPI_File_set_view(fh, var_disp(&g, 0), MPI_DOUBLE, ft, "native", MPI_INFO_NULL), n);
  CHECK_MPI(MPI_File_read_all(fh, halo, 1, mt, MPI_STATUS_IGNORE), n);
  for (int i = 0; i < LX + 2; i++)
    for (int j = 0; j < LY + 2; j++) {
      int edge = i == 0 || j == 0 || i == LX + 1 || j == LY + 1;
      long gi = g.coords[0] * LX + i - 1, gj = g.coords[1] * LY + j - 1;
      expect_double(c, n, 0, gi, gj, halo[i * (LY + 2) + j], edge ? HALO : content_double(0, gi, gj));
    }
  double *plain = xmalloc(sizeof(double) * LX * LY);
  CHECK_MPI(MPI_File_set_view(fh, var_disp(&g, 1), MPI_DOUBLE, ft, "native", MPI_INFO_NULL), n);
  CHECK_MPI(MPI_File_read(fh, plain, LX * LY, MPI_DOUBLE, MPI_STATUS_IGNORE), n);
  for (int i = 0; i < LX; i++)
    for (int j = 0; j < LY; j++) {
      long gi = g.coords[0] * LX + i, gj = g.coords[1] * LY + j;
      expect_double(c, n, 1, gi, gj, plain[i * LY + j], content_double(1, gi, gj));
    }
  free(halo);
  free(plain);
  MPI_Type_free(&ft);
  MPI_Type_free(&mt);
  expect_size(c, n, fh, var_disp(&g, 2));
  CHECK_MPI(MPI_File_close(&fh), n);
}

/* --- hints.dat --- */
enum { HA_BLK = 512, HA_CNT = 8, HB_BLK = 700, HB_CNT = 16 };

static MPI_Info romio_hints(void) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cb_nodes", "2");
  MPI_Info_set(info, "cb_buffer_size", "16384");
  MPI_Info_set(info, "romio_cb_write", "enable");
  MPI_Info_set(info, "romio_cb_read", "enable");
  MPI_Info_set(info, "romio_ds_write", "enable");
  MPI_Info_set(info, "romio_ds_read", "enable");
  MPI_Info_set(info, "ind_wr_buffer_size", "8192");
  return info;
}

static MPI_Datatype interleaved(int count, int blk, int P) {
  MPI_Datatype t;
  MPI_Type_vector(count, blk, blk * P, MPI_BYTE, &t);
  MPI_Type_commit(&t);
  return t;
}

static MPI_Offset hb_base(int P) { return (MPI_Offset)HA_CNT * HA_BLK * P; }

/* Content of the N bytes rank R sees through an interleaved view starting at BASE + R*BLK. */
static void view_content(unsigned char *b, MPI_Offset base, int r, int P, int blk, int count) {
  for (int k = 0; k < count; k++)
    content_fill(FID_HINTS, base + ((MPI_Offset)k * P + r) * blk, b + (size_t)k * blk, (size_t)blk);
}

void write_hints(struct ctx *c) {
  const char *n = "hints.dat";
  const char *path = path_in(c, n, 0);
  int P = c->nprocs, r = c->rank;
  MPI_Info info = romio_hints();
  MPI_File fh;
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), path);

  MPI_Datatype ta = interleaved(HA_CNT, HA_BLK, P);
  unsigned char *b = xmalloc((size_t)HA_CNT * HA_BLK);
  view_content(b, 0, r, P, HA_BLK, HA_CNT);
  CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)r * HA_BLK, MPI_BYTE, ta, "native", info), n);
  CHECK_MPI(MPI_File_write(fh, b, HA_CNT * HA_BLK, MPI_BYTE, MPI_STATUS_IGNORE), n);
  free(b);

  MPI_Datatype tb = interleaved(HB_CNT, HB_BLK, P);
  b = xmalloc((size_t)HB_CNT * HB_BLK);
  view_content(b, hb_base(P), r, P, HB_BLK, HB_CNT);
  CHECK_MPI(MPI_File_set_view(fh, hb_base(P) + (MPI_Offset)r * HB_BLK, MPI_BYTE, tb, "native", info), n);
  CHECK_MPI(MPI_File_write_all(fh, b, HB_CNT * HB_BLK, MPI_BYTE, MPI_STATUS_IGNORE), n);
  free(b);

  CHECK_MPI(MPI_File_sync(fh), n);
  MPI_Type_free(&ta);
  MPI_Type_free(&tb);
  MPI_Info_free(&info);
  CHECK_MPI(MPI_File_close(&fh), n);
}

void read_hints(struct ctx *c) {
  const char *n = "hints.dat";
  const char *path = path_in(c, n, 0);
  int P = c->nprocs, r = c->rank;
  MPI_Info info = romio_hints();
  MPI_File fh;
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh), path);
  MPI_Datatype ta = interleaved(HA_CNT, HA_BLK, P);
  size_t na = (size_t)HA_CNT * HA_BLK, nb = (size_t)HB_CNT * HB_BLK;
  unsigned char *b = xmalloc(nb), *want = xmalloc(nb);
  CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)r * HA_BLK, MPI_BYTE, ta, "native", info), n);
  CHECK_MPI(MPI_File_read(fh, b, (int)na, MPI_BYTE, MPI_STATUS_IGNORE), n);
  view_content(want, 0, r, P, HA_BLK, HA_CNT);
  if (memcmp(b, want, na) != 0) {
    fprintf(stderr, "MISMATCH rank %d %s: region A (data-sieved independent writes) differs\n", r, n);
    c->mismatches++;
  }
  MPI_Datatype tb = interleaved(HB_CNT, HB_BLK, P);
  CHECK_MPI(MPI_File_set_view(fh, hb_base(P) + (MPI_Offset)r * HB_BLK, MPI_BYTE, tb, "native", info), n);
  CHECK_MPI(MPI_File_read_all(fh, b, (int)nb, MPI_BYTE, MPI_STATUS_IGNORE), n);
  view_content(want, hb_base(P), r, P, HB_BLK, HB_CNT);
  if (memcmp(b, want, nb) != 0) {
    fprintf(stderr, "MISMATCH rank %d %s: region B (collective-buffered writes) differs\n", r, n);
    c->mismatches++;
  }
  free(b);
  free(want);
  MPI_Type_free(&ta);
  MPI_Type_free(&tb);
  MPI_Info_free(&info);
  expect_size(c, n, fh, hb_base(P) + (MPI_Offset)HB_CNT * HB_BLK * P);
  CHECK_MPI(MPI_File_close(&fh), n);
}
