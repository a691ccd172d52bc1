/* N->N files (one per rank, MPI_COMM_SELF) and scratch files that must be gone after the run.
 *
 * rank_NNNN.dat: write_at, then seek + write past a hole, set_size shrinks then grows
 * (zeros), MPI_File_sync (returns only once committed, under the library), then one more
 * write after the sync: the version closed last, not the one synced, must be what survives.
 * scratch.dat is written collectively and removed with MPI_File_delete by rank 0;
 * scratch_doc.dat is opened with MPI_MODE_DELETE_ON_CLOSE. */
#include <stdio.h>
#include <stdlib.h>

#include "mpiio_patterns.h"

enum { PR_HOLE_AT = 10000, PR_TAIL = 3000, PR_SHRINK = 12000, PR_GROW = 14000, PR_LATE = 500 };
static int pr_len(int r) { return 6000 + 100 * r; }
static int pr_fid(int r) { return 100 + r; }

static const char *rank_path(const struct ctx *c, int r) {
  char name[64];
  snprintf(name, sizeof name, "rank_%04d.dat", r);
  return path_in(c, name, 1);
}

void write_per_rank(struct ctx *c) {
  const char *path = rank_path(c, c->rank);
  int r = c->rank, fid = pr_fid(r);
  MPI_File fh;
  CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), path);
  unsigned char *b = xmalloc(pr_len(r) > PR_TAIL ? pr_len(r) : PR_TAIL);
  content_fill(fid, 0, b, pr_len(r));
  CHECK_MPI(MPI_File_write_at(fh, 0, b, pr_len(r), MPI_BYTE, MPI_STATUS_IGNORE), path);
  content_fill(fid, PR_HOLE_AT, b, PR_TAIL);
  CHECK_MPI(MPI_File_seek(fh, PR_HOLE_AT, MPI_SEEK_SET), path);
  CHECK_MPI(MPI_File_write(fh, b, PR_TAIL, MPI_BYTE, MPI_STATUS_IGNORE), path);
  CHECK_MPI(MPI_File_set_size(fh, PR_SHRINK), path);
  CHECK_MPI(MPI_File_set_size(fh, PR_GROW), path);
  CHECK_MPI(MPI_File_sync(fh), path);
  content_fill(fid, PR_GROW - PR_LATE, b, PR_LATE);
  CHECK_MPI(MPI_File_write_at(fh, PR_GROW - PR_LATE, b, PR_LATE, MPI_BYTE, MPI_STATUS_IGNORE), path);
  free(b);
  CHECK_MPI(MPI_File_close(&fh), path);
}

void read_per_rank(struct ctx *c) {
  /* Read the neighbour's file: a restart need not map ranks to files as the writer did. */
  int r = (c->rank + 1) % c->nprocs, fid = pr_fid(r);
  const char *path = rank_path(c, r);
  MPI_File fh;
  CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), path);
  unsigned char *b = xmalloc(PR_GROW);
  CHECK_MPI(MPI_File_read_at(fh, 0, b, PR_GROW, MPI_BYTE, MPI_STATUS_IGNORE), path);
  expect_content(c, path, fid, 0, b, pr_len(r));
  expect_zero(c, path, pr_len(r), b + pr_len(r), PR_HOLE_AT - pr_len(r));
  expect_content(c, path, fid, PR_HOLE_AT, b + PR_HOLE_AT, PR_SHRINK - PR_HOLE_AT);
  expect_zero(c, path, PR_SHRINK, b + PR_SHRINK, PR_GROW - PR_LATE - PR_SHRINK);
  expect_content(c, path, fid, PR_GROW - PR_LATE, b + PR_GROW - PR_LATE, PR_LATE);
  expect_size(c, path, fh, PR_GROW);
  free(b);
  CHECK_MPI(MPI_File_close(&fh), path);
}

static const char *const SCRATCH[] = {"scratch.dat", "scratch_doc.dat"};

void write_scratch(struct ctx *c) {
  for (int s = 0; s < 2; s++) {
    const char *path = path_in(c, SCRATCH[s], 1);
    int amode = MPI_MODE_CREATE | MPI_MODE_WRONLY | (s == 1 ? MPI_MODE_DELETE_ON_CLOSE : 0);
    MPI_File fh;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh), path);
    unsigned char b[1000];
    content_fill(20 + s, 1000LL * c->rank, b, sizeof b);
    CHECK_MPI(MPI_File_write_at_all(fh, 1000LL * c->rank, b, sizeof b, MPI_BYTE, MPI_STATUS_IGNORE), path);
    CHECK_MPI(MPI_File_close(&fh), path);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (c->rank == 0) CHECK_MPI(MPI_File_delete(path_in(c, SCRATCH[0], 1), MPI_INFO_NULL), SCRATCH[0]);
  MPI_Barrier(MPI_COMM_WORLD);
}

void read_scratch(struct ctx *c) {
  if (c->rank != 0) return;
  for (int s = 0; s < 2; s++) {
    const char *path = path_in(c, SCRATCH[s], 1);
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS) {
      fprintf(stderr, "MISMATCH rank 0 %s: still exists after MPI_File_delete / DELETE_ON_CLOSE\n", path);
      c->mismatches++;
      MPI_File_close(&fh);
    } else {
      int cls = 0;
      MPI_Error_class(rc, &cls);
      if (cls != MPI_ERR_NO_SUCH_FILE) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "MISMATCH rank 0 %s: open failed with %s, expected MPI_ERR_NO_SUCH_FILE\n", path, msg);
        c->mismatches++;
      }
    }
  }
}
