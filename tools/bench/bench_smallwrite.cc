// bench_smallwrite: many small files written by one process, the pattern of applications
// that checkpoint one file per object. Run it with and without LD_PRELOAD=libckptfwd.so
// (CKPTFWD_CAPTURE on --dir); the wall time of the whole process minus the seconds it
// prints is the library's exit wait (the commit of what was written).
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

void usage(FILE* to) {
  fprintf(to,
          "usage: bench_smallwrite --dir DIR [--files N] [--size S]\n"
          "  Writes N files of S bytes (open, write, close) into DIR as f<i>.bin and prints\n"
          "  'files=N bytes=<total> seconds=<time of the writes>'. The directory must exist.\n"
          "  --files N  number of files (default 10000)\n"
          "  --size S   bytes per file (default 4096)\n");
}

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  long files = 10000;
  long size = 4096;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
      dir = argv[++i];
    } else if (!strcmp(argv[i], "--files") && i + 1 < argc) {
      files = atol(argv[++i]);
    } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
      size = atol(argv[++i]);
    } else {
      fprintf(stderr, "bench_smallwrite: unknown argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (dir.empty() || files <= 0 || size < 0) {
    fprintf(stderr, "bench_smallwrite: --dir is required, --files > 0, --size >= 0\n");
    usage(stderr);
    return 2;
  }
  std::vector<char> data(static_cast<size_t>(size));
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 + 7);
  double t0 = now_s();
  for (long f = 0; f < files; ++f) {
    std::string path = dir + "/f" + std::to_string(f) + ".bin";
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
      fprintf(stderr, "bench_smallwrite: cannot create %s: %s\n", path.c_str(), strerror(errno));
      return 1;
    }
    memcpy(data.data(), &f, data.size() < sizeof(f) ? data.size() : sizeof(f));
    for (size_t done = 0; done < data.size();) {
      ssize_t w = write(fd, data.data() + done, data.size() - done);
      if (w <= 0) {
        fprintf(stderr, "bench_smallwrite: write %s: %s\n", path.c_str(), strerror(errno));
        return 1;
      }
      done += static_cast<size_t>(w);
    }
    if (close(fd) != 0) {
      fprintf(stderr, "bench_smallwrite: close %s: %s\n", path.c_str(), strerror(errno));
      return 1;
    }
  }
  double t1 = now_s();
  printf("files=%ld bytes=%ld seconds=%.3f\n", files, files * size, t1 - t0);
  return 0;
}
