/* Shared pieces of the MPI-IO test programs: deterministic content, checks, digests.
 *
 * Every byte a test file holds is a function of (file id, byte offset), so any rank can
 * verify any region no matter which rank or which MPI-IO path wrote it, and a run with the
 * library can be compared with a run without it. */
#ifndef CKPTFWD_TESTS_MPIIO_COMMON_H
#define CKPTFWD_TESTS_MPIIO_COMMON_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

struct ctx {
  const char *dir;
  int rank;
  int nprocs;
  long mismatches; /* read mode: wrong bytes seen by this rank */
};

/* Aborts the whole job with the MPI error text, the call and the file it was about. */
#define CHECK_MPI(call, file) check_mpi((call), #call, (file), __FILE__, __LINE__)
void check_mpi(int rc, const char *what, const char *file, const char *src, int line);

/* DIR/NAME in a static buffer per slot (0..3), so a few may be held at once. */
const char *path_in(const struct ctx *c, const char *name, int slot);

/* Byte OFF of file FID. */
unsigned char content_byte(int fid, MPI_Offset off);
void content_fill(int fid, MPI_Offset off, void *buf, size_t len);
/* Value of element (i, j) of variable VAR of the subarray file (exact in binary64). */
double content_double(int var, long i, long j);

/* Compares BUF (LEN bytes read from OFF of NAME) with the content; counts and reports
 * (first few per call) mismatches in C. */
void expect_content(struct ctx *c, const char *name, int fid, MPI_Offset off, const void *buf,
                    size_t len);
void expect_zero(struct ctx *c, const char *name, MPI_Offset off, const void *buf, size_t len);
void expect_size(struct ctx *c, const char *name, MPI_File fh, MPI_Offset want);

/* 64-bit FNV-1a of the whole file, read from rank-local MPI_COMM_SELF handle. */
void print_digest(const struct ctx *c, const char *name);

void *xmalloc(size_t n);

#endif
