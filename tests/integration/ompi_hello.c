/* ompi_hello: a program linked with Open MPI (not the MPICH the project builds against),
 * so the preload library is shown not to drag in or clash with any MPI. After MPI_Init each
 * rank writes one file with plain POSIX calls: DIR/ompi_r<rank>.txt. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    fprintf(stderr, "usage: ompi_hello DIR\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/ompi_r%d.txt", argv[1], rank);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror(path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  char line[128];
  int ok = 1;
  for (int i = 0; i < 1000 && ok; ++i) {
    int n = snprintf(line, sizeof line, "rank %d of %d line %d value %.17g\n", rank, size, i,
                     (double)i / (rank + 3.0));
    ok = write(fd, line, (size_t)n) == n;
  }
  if (!ok || close(fd) != 0) {
    perror(path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("ompi_hello: %d ranks wrote their files\n", size);
  MPI_Finalize();
  return 0;
}
