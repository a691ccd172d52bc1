/* One write function and one read-back function per test file. Each read function reads
 * what its write function wrote with the matching read variant, checks the bytes and the
 * file size, and counts mismatches in the ctx. */
#ifndef CKPTFWD_TESTS_MPIIO_PATTERNS_H
#define CKPTFWD_TESTS_MPIIO_PATTERNS_H

#include "mpiio_common.h"

struct pattern {
  const char *name; /* file name in DIR (N->1), or a printf format with the rank (N->N) */
  int per_rank;     /* 1: one file per rank opened on MPI_COMM_SELF */
  void (*write)(struct ctx *c);
  void (*read)(struct ctx *c);
};

/* Byte streams on shared files (mpiio_shared_files.c). */
void write_indep_at(struct ctx *c);
void read_indep_at(struct ctx *c);
void write_coll_at(struct ctx *c);
void read_coll_at(struct ctx *c);
void write_file_ptr(struct ctx *c);
void read_file_ptr(struct ctx *c);
void write_shared_ptr(struct ctx *c);
void read_shared_ptr(struct ctx *c);
void write_split(struct ctx *c);
void read_split(struct ctx *c);
void write_nonblocking(struct ctx *c);
void read_nonblocking(struct ctx *c);
void write_prealloc(struct ctx *c);
void read_prealloc(struct ctx *c);

/* MPI's sync-barrier-sync consistency on one open file (mpiio_consistency.c). */
void write_sync_visible(struct ctx *c);
void read_sync_visible(struct ctx *c);

/* File views: subarrays of MPI_DOUBLE, strided views with ROMIO hints (mpiio_views.c). */
void write_subarray(struct ctx *c);
void read_subarray(struct ctx *c);
void write_hints(struct ctx *c);
void read_hints(struct ctx *c);

/* N->N files and deleted scratch files (mpiio_per_rank.c). */
void write_per_rank(struct ctx *c);
void read_per_rank(struct ctx *c);
void write_scratch(struct ctx *c);
void read_scratch(struct ctx *c);

#endif
