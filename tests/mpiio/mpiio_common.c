/* See mpiio_common.h. */
#include "mpiio_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void check_mpi(int rc, const char *what, const char *file, const char *src, int line) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "mpiio_writer: rank %d: %s failed on %s: %s (%s:%d)\n", rank, what,
          file ? file : "-", msg, src, line);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

const char *path_in(const struct ctx *c, const char *name, int slot) {
  static char paths[4][4096];
  snprintf(paths[slot & 3], sizeof paths[0], "%s/%s", c->dir, name);
  return paths[slot & 3];
}

static uint64_t mix64(uint64_t x) { /* splitmix64 finaliser */
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* Half the words are a slow ramp (compressible, like real fields), half pseudo-random
 * (so a misplaced block cannot match by accident). */
unsigned char content_byte(int fid, MPI_Offset off) {
  uint64_t word = (uint64_t)off >> 3;
  uint64_t v = (word & 1) ? mix64(((uint64_t)fid << 40) ^ word) : (word * 2654435761ULL + (uint64_t)fid);
  return (unsigned char)(v >> (8 * (off & 7)));
}

void content_fill(int fid, MPI_Offset off, void *buf, size_t len) {
  unsigned char *p = buf;
  for (size_t i = 0; i < len; i++) p[i] = content_byte(fid, off + (MPI_Offset)i);
}

double content_double(int var, long i, long j) { return var * 1.0e6 + i * 1000.0 + j + 0.25; }

void expect_content(struct ctx *c, const char *name, int fid, MPI_Offset off,
                    const void *buf, size_t len) {
  const unsigned char *p = buf;
  long bad = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char want = content_byte(fid, off + (MPI_Offset)i);
    if (p[i] != want) {
      if (bad < 3)
        fprintf(stderr, "MISMATCH rank %d %s offset %lld: expected 0x%02x got 0x%02x\n", c->rank,
                name, (long long)(off + (MPI_Offset)i), want, p[i]);
      bad++;
    }
  }
  if (bad > 3) fprintf(stderr, "MISMATCH rank %d %s [%lld, +%zu): %ld bytes wrong\n", c->rank, name, (long long)off, len, bad);
  c->mismatches += bad;
}

void expect_zero(struct ctx *c, const char *name, MPI_Offset off, const void *buf, size_t len) {
  const unsigned char *p = buf;
  long bad = 0;
  for (size_t i = 0; i < len; i++) bad += p[i] != 0;
  if (bad)
    fprintf(stderr, "MISMATCH rank %d %s hole [%lld, +%zu): %ld non-zero bytes\n", c->rank, name,
            (long long)off, len, bad);
  c->mismatches += bad;
}

void expect_size(struct ctx *c, const char *name, MPI_File fh, MPI_Offset want) {
  MPI_Offset got = -1;
  CHECK_MPI(MPI_File_get_size(fh, &got), name);
  if (got != want) {
    fprintf(stderr, "MISMATCH rank %d %s: MPI_File_get_size %lld, expected %lld\n", c->rank, name,
            (long long)got, (long long)want);
    c->mismatches++;
  }
}

void print_digest(const struct ctx *c, const char *name) {
  const char *path = path_in(c, name, 3);
  MPI_File fh;
  CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), path);
  MPI_Offset size = 0;
  CHECK_MPI(MPI_File_get_size(fh, &size), path);
  enum { CHUNK = 1 << 20 };
  unsigned char *buf = xmalloc(CHUNK);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (MPI_Offset off = 0; off < size; off += CHUNK) {
    int n = (int)(size - off < CHUNK ? size - off : CHUNK);
    MPI_Status st;
    CHECK_MPI(MPI_File_read_at(fh, off, buf, n, MPI_BYTE, &st), path);
    int got = 0;
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (got != n) {
      fprintf(stderr, "mpiio_writer: %s: short read at %lld (%d of %d)\n", path, (long long)off, got, n);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < n; i++) h = (h ^ buf[i]) * 0x100000001b3ULL;
  }
  free(buf);
  CHECK_MPI(MPI_File_close(&fh), path);
  printf("digest %s size %lld fnv1a64 %016llx\n", name, (long long)size, (unsigned long long)h);
}

void *xmalloc(size_t n) {
  void *p = calloc(1, n ? n : 1);
  if (!p) {
    fprintf(stderr, "mpiio_writer: out of memory (%zu bytes)\n", n);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return p;
}
