/* posix_shared MODE FILE [BLOCK]: one file shared by the ranks of an MPI job through plain
 * POSIX calls (open, pwrite, read, fsync, close: no MPI-IO), in the patterns real codes use
 * across nodes. Every byte is a function of its offset, so a run without ckptfwd leaves the
 * file the check expects. Each rank reads the whole file back after the last barrier and
 * compares it; exit 1 (and a MISMATCH line) when any byte differs. MODE:
 *   header  rank 0 creates FILE, writes a 100-byte header and closes it; after a barrier
 *           every rank opens it O_WRONLY, pwrites its block after the header, closes it.
 *   n1      every rank opens FILE O_CREAT|O_WRONLY and pwrites its blocks, interleaved
 *           (block k of rank r at (k * nprocs + r) * BLOCK), 16 blocks each, and closes.
 *   n1sync  n1 with an fsync after the writes.
 *   chain   a file handed from rank to rank, 8 times: each appends its block (O_APPEND)
 *           and closes; the next rank opens it after a barrier. Ranks alternate between
 *           the two halves of the job (two nodes when each half is one node). Before its
 *           open each stats the file: it must show the size the last rank left.
 *   rename  rank 0 writes FILE.tmp (16 blocks), closes it and renames it to FILE.
 *   replace the last rank writes an older FILE (other bytes), FILE.old and FILE.part (16
 *           blocks) and closes them; after a barrier rank 0 writes FILE.tmp (16 blocks),
 *           renames it onto FILE, renames FILE.part to FILE.moved and unlinks FILE.old:
 *           the name space operations of one node on another node's files. After the
 *           last barrier every rank checks that FILE.tmp, FILE.part and FILE.old are gone
 *           (stat and a listing of the directory) and FILE.moved has its 16 blocks.
 * After the last barrier every rank stats FILE (the size must be the whole file's).
 * Prints "elapsed S" (rank 0: the writes and barriers, without the read-back). */
#include <dirent.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER 100

static unsigned char byte_of(long off) {
  return (unsigned char)((off * 131 + (off >> 10) * 7 + 1) & 0xff);
}

static void fill(unsigned char *buf, long off, size_t n) {
  for (size_t i = 0; i < n; ++i) buf[i] = byte_of(off + (long)i);
}

static void die(int rank, const char *what, const char *file) {
  fprintf(stderr, "rank %d: %s %s: ", rank, what, file);
  perror("");
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Counts a file that exists, which must not. */
static long check_gone(int rank, const char *file) {
  struct stat st;
  if (stat(file, &st) != 0) return 0;
  printf("MISMATCH rank %d: %s still exists (%ld bytes)\n", rank, file, (long)st.st_size);
  return 1;
}

/* Counts a directory listing of file's directory that has file's name (want 0) or lacks
 * it (want 1). */
static long check_listed(int rank, const char *file, int want) {
  char dir[4096];
  snprintf(dir, sizeof(dir), "%s", file);
  char *slash = strrchr(dir, '/');
  const char *name = slash ? slash + 1 : file;
  if (slash) *slash = 0;
  DIR *d = opendir(slash ? dir : ".");
  if (!d) die(rank, "opendir", dir);
  int found = 0;
  for (struct dirent *e; (e = readdir(d));) found |= !strcmp(e->d_name, name);
  closedir(d);
  if (found == want) return 0;
  printf("MISMATCH rank %d: the listing of %s %s %s\n", rank, dir, found ? "has" : "lacks", name);
  return 1;
}

/* Writes n bytes of pattern (byte_of offset, xor x) to a new file. */
static void write_new(int rank, const char *file, long n, unsigned char x) {
  int fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) die(rank, "open", file);
  unsigned char b[4096];
  for (long off = 0; off < n; off += (long)sizeof(b)) {
    size_t k = n - off < (long)sizeof(b) ? (size_t)(n - off) : sizeof(b);
    fill(b, off, k);
    for (size_t i = 0; i < k; ++i) b[i] ^= x;
    if (write(fd, b, k) != (ssize_t)k) die(rank, "write", file);
  }
  if (close(fd) != 0) die(rank, "close", file);
}

/* Counts a stat of file that does not show `want` bytes. */
static long check_size(int rank, const char *file, long want, const char *when) {
  struct stat st;
  if (stat(file, &st) == 0 && st.st_size == want) return 0;
  printf("MISMATCH rank %d: stat %s %s shows %ld bytes, not %ld\n", rank, when, file,
         stat(file, &st) == 0 ? (long)st.st_size : -1L, want);
  return 1;
}

static void pwrite_all(int rank, int fd, const unsigned char *b, size_t n, long off,
                       const char *f) {
  if (pwrite(fd, b, n, off) != (ssize_t)n) die(rank, "pwrite", f);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (argc < 3) {
    if (rank == 0)
      fprintf(stderr, "usage: posix_shared header|n1|n1sync|chain|rename|replace FILE [BLOCK]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char *mode = argv[1], *file = argv[2];
  long block = argc > 3 ? atol(argv[3]) : 1000;
  unsigned char *buf = malloc((size_t)block);
  long size = 0, bad_stats = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (!strcmp(mode, "header")) {
    if (rank == 0) {
      int fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0644);
      if (fd < 0) die(rank, "open", file);
      unsigned char h[HEADER];
      fill(h, 0, HEADER);
      pwrite_all(rank, fd, h, HEADER, 0, file);
      if (close(fd) != 0) die(rank, "close", file);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int fd = open(file, O_WRONLY);
    if (fd < 0) die(rank, "open", file);
    long off = HEADER + rank * block;
    fill(buf, off, (size_t)block);
    pwrite_all(rank, fd, buf, (size_t)block, off, file);
    if (close(fd) != 0) die(rank, "close", file);
    size = HEADER + nprocs * block;
  } else if (!strcmp(mode, "n1") || !strcmp(mode, "n1sync")) {
    int fd = open(file, O_CREAT | O_WRONLY, 0644);
    if (fd < 0) die(rank, "open", file);
    for (int k = 0; k < 16; ++k) {
      long off = ((long)k * nprocs + rank) * block;
      fill(buf, off, (size_t)block);
      pwrite_all(rank, fd, buf, (size_t)block, off, file);
    }
    if (!strcmp(mode, "n1sync") && fsync(fd) != 0) die(rank, "fsync", file);
    if (close(fd) != 0) die(rank, "close", file);
    size = 16L * nprocs * block;
  } else if (!strcmp(mode, "chain")) {
    int half = nprocs / 2 > 0 ? nprocs / 2 : 1;
    for (int i = 0; i < 8; ++i) {
      int who = nprocs == 1 ? 0 : (i % 2) * half + (i / 2) % half;
      if (rank == who) {
        if (i > 0) bad_stats += check_size(rank, file, (long)i * block, "before its open");
        int fd = open(file, O_WRONLY | O_APPEND | (i == 0 ? O_CREAT | O_TRUNC : 0), 0644);
        if (fd < 0) die(rank, "open", file);
        fill(buf, (long)i * block, (size_t)block);
        if (write(fd, buf, (size_t)block) != (ssize_t)block) die(rank, "write", file);
        if (close(fd) != 0) die(rank, "close", file);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
    size = 8 * block;
  } else if (!strcmp(mode, "rename")) {
    if (rank == 0) {
      char tmp[4096];
      snprintf(tmp, sizeof(tmp), "%s.tmp", file);
      int fd = open(tmp, O_CREAT | O_TRUNC | O_WRONLY, 0644);
      if (fd < 0) die(rank, "open", tmp);
      for (int k = 0; k < 16; ++k) {
        fill(buf, (long)k * block, (size_t)block);
        pwrite_all(rank, fd, buf, (size_t)block, (long)k * block, tmp);
      }
      if (close(fd) != 0) die(rank, "close", tmp);
      if (rename(tmp, file) != 0) die(rank, "rename to", file);
    }
    size = 16 * block;
  } else if (!strcmp(mode, "replace")) {
    char tmp[4096], old[4096], part[4096], moved[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", file);
    snprintf(old, sizeof(old), "%s.old", file);
    snprintf(part, sizeof(part), "%s.part", file);
    snprintf(moved, sizeof(moved), "%s.moved", file);
    if (rank == nprocs - 1) {
      write_new(rank, file, 3 * block, 0x5a);
      write_new(rank, old, block, 0xa5);
      write_new(rank, part, 16 * block, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      write_new(rank, tmp, 16 * block, 0);
      if (rename(tmp, file) != 0) die(rank, "rename onto", file);
      if (rename(part, moved) != 0) die(rank, "rename to", moved);
      if (unlink(old) != 0) die(rank, "unlink", old);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    bad_stats += check_gone(rank, tmp) + check_gone(rank, part) + check_gone(rank, old);
    bad_stats += check_size(rank, moved, 16 * block, "after the rename");
    bad_stats += check_listed(rank, file, 1) + check_listed(rank, moved, 1) +
                 check_listed(rank, tmp, 0) + check_listed(rank, part, 0) +
                 check_listed(rank, old, 0);
    size = 16 * block;
  } else {
    if (rank == 0) fprintf(stderr, "unknown mode %s\n", mode);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double elapsed = MPI_Wtime() - t0;
  bad_stats += check_size(rank, file, size, "after the writes");
  unsigned char *all = malloc((size_t)size + 1);
  int fd = open(file, O_RDONLY);
  if (fd < 0) die(rank, "open for reading", file);
  long got = 0;
  for (ssize_t r; got <= size && (r = read(fd, all + got, (size_t)(size + 1 - got))) > 0;) got += r;
  close(fd);
  long bad = (got == size ? 0 : 1) + bad_stats, first = got == size ? -1 : got;
  for (long i = 0; i < got && i < size; ++i)
    if (all[i] != byte_of(i)) {
      if (first < 0) first = i;
      ++bad;
    }
  if (bad)
    printf("MISMATCH rank %d: read %ld bytes of %ld, %ld wrong (first at byte %ld)\n", rank, got,
           size, bad, first);
  long total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("elapsed %.3f\n", elapsed);
  free(all);
  free(buf);
  MPI_Finalize();
  return total ? 1 : 0;
}
