// bench_fsync: write one file of BYTES in large writes, fsync it, close it; prints
// "write_s=<s> fsync_s=<s> close_s=<s>". make bench runs it on the store's disk directly and
// under ckptfwd (where fsync returns once the file is committed to the store).
//   bench_fsync --file FILE --bytes SIZE[K|M|G] [--write-size SIZE]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

size_t parse_size(const char* v) {
  char* end = nullptr;
  unsigned long long x = strtoull(v, &end, 10);
  if (*end == 'K') x <<= 10;
  if (*end == 'M') x <<= 20;
  if (*end == 'G') x <<= 30;
  return static_cast<size_t>(x);
}

int usage(int rc) {
  fprintf(rc ? stderr : stdout,
          "usage: bench_fsync --file FILE --bytes SIZE [--write-size SIZE]\n"
          "  writes SIZE bytes (K/M/G suffix) to FILE, fsyncs, closes;\n"
          "  prints 'write_s= fsync_s= close_s='\n");
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  std::string file;
  size_t bytes = 0, chunk = 8u << 20;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") return usage(0);
    if (i + 1 >= argc) return usage(2);
    if (a == "--file")
      file = argv[++i];
    else if (a == "--bytes")
      bytes = parse_size(argv[++i]);
    else if (a == "--write-size")
      chunk = parse_size(argv[++i]);
    else
      return usage(2);
  }
  if (file.empty() || bytes == 0 || chunk == 0) return usage(2);
  // Smooth doubles, so a compressing store does the work it would on real data.
  std::vector<double> vals(bytes / sizeof(double) + 1);
  for (size_t i = 0; i < vals.size(); ++i)
    vals[i] = 1000.0 + 0.001 * static_cast<double>(i % 100003);
  const char* p = reinterpret_cast<const char*>(vals.data());

  double t0 = now();
  int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    fprintf(stderr, "bench_fsync: cannot create %s: %s\n", file.c_str(), strerror(errno));
    return 1;
  }
  for (size_t off = 0; off < bytes;) {
    ssize_t w = write(fd, p + off, std::min(chunk, bytes - off));
    if (w <= 0) {
      fprintf(stderr, "bench_fsync: write to %s failed: %s\n", file.c_str(), strerror(errno));
      return 1;
    }
    off += static_cast<size_t>(w);
  }
  double t1 = now();
  if (fsync(fd) != 0) {
    fprintf(stderr, "bench_fsync: fsync of %s failed: %s\n", file.c_str(), strerror(errno));
    return 1;
  }
  double t2 = now();
  if (close(fd) != 0) {
    fprintf(stderr, "bench_fsync: close of %s failed: %s\n", file.c_str(), strerror(errno));
    return 1;
  }
  double t3 = now();
  printf("write_s=%.6f fsync_s=%.6f close_s=%.6f\n", t1 - t0, t2 - t1, t3 - t2);
  return 0;
}
