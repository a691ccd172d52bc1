/* mpiio_writer: an MPI-IO checkpoint writer for the MPI-IO capture tests (built with MPICH).
 *
 *   mpiio_writer write DIR   writes every test file (see mpiio_patterns.h) into DIR
 *   mpiio_writer writeread DIR  both in one job: the read-back of a job that reopens its
 *                            checkpoint before it ends (as ph5example does)
 *   mpiio_writer read DIR    reads them back with the matching read variants, checks every
 *                            byte and size, and prints from rank 0 one line per file:
 *                              digest NAME size BYTES fnv1a64 HEX
 *                            then "verify: N mismatches". Exit 1 on any mismatch (also
 *                            on one found by a write mode's own mid-write read-back).
 *
 * Run the read at the rank count of the write (the layouts depend on it). The content is
 * deterministic, so the digests of a direct run and of a run under the library must match.
 * Any MPI error aborts the job (exit != 0) naming the call and the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiio_patterns.h"

static const struct pattern PATTERNS[] = {
    {"indep_at.dat", 0, write_indep_at, read_indep_at},
    {"coll_at.dat", 0, write_coll_at, read_coll_at},
    {"file_ptr.dat", 0, write_file_ptr, read_file_ptr},
    {"shared_ptr.dat", 0, write_shared_ptr, read_shared_ptr},
    {"split.dat", 0, write_split, read_split},
    {"nonblocking.dat", 0, write_nonblocking, read_nonblocking},
    {"prealloc.dat", 0, write_prealloc, read_prealloc},
    {"subarray.dat", 0, write_subarray, read_subarray},
    {"hints.dat", 0, write_hints, read_hints},
    {"sync_visible.dat", 0, write_sync_visible, read_sync_visible},
    {"rank_%04d.dat", 1, write_per_rank, read_per_rank},
    {NULL, 0, write_scratch, read_scratch}, /* files that must not exist afterwards */
};
enum { NPATTERNS = sizeof PATTERNS / sizeof PATTERNS[0] };

static int usage(int rank) {
  if (rank == 0) fprintf(stderr, "usage: mpiio_writer write|read|writeread DIR\n");
  return 2;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  struct ctx c = {NULL, 0, 1, 0};
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.nprocs);
  if (argc != 3 || (strcmp(argv[1], "write") != 0 && strcmp(argv[1], "read") != 0 &&
                    strcmp(argv[1], "writeread") != 0)) {
    int rc = usage(c.rank);
    MPI_Finalize();
    return rc;
  }
  int writing = strcmp(argv[1], "write") == 0;
  int reading = !writing;
  c.dir = argv[2];

  if (strcmp(argv[1], "read") != 0)
    for (int i = 0; i < NPATTERNS; i++) PATTERNS[i].write(&c);
  if (reading)
    for (int i = 0; i < NPATTERNS; i++) PATTERNS[i].read(&c);

  int rc = 0;
  if (writing) {
    /* Some writers read back in the middle (sync_visible.dat): their checks count too. */
    long total = 0;
    MPI_Allreduce(&c.mismatches, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (c.rank == 0) printf("mpiio_writer: wrote %d patterns at %d ranks into %s, %ld mismatches while writing\n", NPATTERNS, c.nprocs, c.dir, total);
    rc = total == 0 ? 0 : 1;
  } else {
    long total = 0;
    MPI_Reduce(&c.mismatches, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (c.rank == 0) {
      for (int i = 0; i < NPATTERNS; i++) {
        if (!PATTERNS[i].name) continue;
        if (!PATTERNS[i].per_rank) {
          print_digest(&c, PATTERNS[i].name);
          continue;
        }
        for (int r = 0; r < c.nprocs; r++) {
          char name[64];
          snprintf(name, sizeof name, PATTERNS[i].name, r);
          print_digest(&c, name);
        }
      }
      printf("verify: %ld mismatches\n", total);
      fflush(stdout);
    }
    MPI_Bcast(&total, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    rc = total == 0 ? 0 : 1;
  }
  MPI_Finalize();
  return rc;
}
