// bench_smallfiles: many small files, as restart of a code that writes one file per
// object does. write mode creates DIR/sf_<i>.dat (i < COUNT), SIZE bytes each, contents a
// function of i; read mode reads them all back and compares every byte (exit 1 naming the
// first file that differs). Prints "files=<n> bytes=<total> seconds=<time in the calls>".
//   bench_smallfiles --mode write|read --dir DIR [--count N] [--size SIZE]
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
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

void contents(long i, std::vector<unsigned char>& out) {
  uint64_t x = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(i + 1);
  for (size_t k = 0; k < out.size(); ++k) {
    // Text-like bytes (compressible, different per file).
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    out[k] = static_cast<unsigned char>('a' + (x >> 60));
  }
}

int usage(int rc) {
  fprintf(rc ? stderr : stdout,
          "usage: bench_smallfiles --mode write|read --dir DIR [--count N] [--size BYTES]\n"
          "  default 10000 files of 4096 bytes; prints 'files= bytes= seconds='\n");
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode, dir;
  long count = 10000;
  size_t size = 4096;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") return usage(0);
    if (i + 1 >= argc) return usage(2);
    if (a == "--mode")
      mode = argv[++i];
    else if (a == "--dir")
      dir = argv[++i];
    else if (a == "--count")
      count = strtol(argv[++i], nullptr, 10);
    else if (a == "--size")
      size = strtoul(argv[++i], nullptr, 10);
    else
      return usage(2);
  }
  if ((mode != "write" && mode != "read") || dir.empty() || count <= 0 || size == 0)
    return usage(2);
  std::vector<unsigned char> want(size), got(size + 1);
  double secs = 0;
  for (long i = 0; i < count; ++i) {
    const std::string path = dir + "/sf_" + std::to_string(i) + ".dat";
    contents(i, want);
    double t0 = now();
    if (mode == "write") {
      int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      bool ok = fd >= 0 && write(fd, want.data(), size) == static_cast<ssize_t>(size);
      if (fd < 0 || close(fd) != 0 || !ok) {
        fprintf(stderr, "bench_smallfiles: cannot write %s: %s\n", path.c_str(), strerror(errno));
        return 1;
      }
      secs += now() - t0;
    } else {
      int fd = open(path.c_str(), O_RDONLY);
      ssize_t n = 0, r = 0;
      while (fd >= 0 && (r = read(fd, got.data() + n, got.size() - static_cast<size_t>(n))) > 0 &&
             (n += r) < static_cast<ssize_t>(got.size())) {
      }
      if (fd < 0 || r < 0 || close(fd) != 0) {
        fprintf(stderr, "bench_smallfiles: cannot read %s: %s\n", path.c_str(), strerror(errno));
        return 1;
      }
      secs += now() - t0;
      if (n != static_cast<ssize_t>(size) || memcmp(got.data(), want.data(), size) != 0) {
        fprintf(stderr, "bench_smallfiles: %s differs from what was written (%zd bytes read)\n",
                path.c_str(), n);
        return 1;
      }
    }
  }
  printf("files=%ld bytes=%zu seconds=%.6f\n", count, static_cast<size_t>(count) * size, secs);
  return 0;
}
