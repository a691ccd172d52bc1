// bench_fsync: how long an application waits for fsync of one checkpoint file.
//
// Writes N MiB of smooth float64 data (a temperature-like field on a 3-D grid, as
// examples/stencil3d writes) to one file with write(2), fsyncs it, closes it, and prints
//   write_s=<s> fsync_s=<s> close_s=<s> total_s=<s> bytes=<n>
// on one line. Run it on a directory of the store's disk for the direct figure, and
// under LD_PRELOAD=libckptfwd.so with CKPTFWD_CAPTURE matching the file for the captured
// one (tools/bench/bench_fsync.sh runs both, interleaved).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const char* fmt, const char* arg) {
  fprintf(stderr, "bench_fsync: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n");
  exit(2);
}

void usage(FILE* to) {
  fprintf(to,
          "usage: bench_fsync --path FILE [--mib N] [--seed N] [--keep] [--no-fsync]\n"
          "Writes N MiB (default 64) of smooth float64 data to FILE with write(2), fsyncs\n"
          "and closes it; prints 'write_s= fsync_s= close_s= total_s= bytes=' on one line.\n"
          "  --path FILE  file to write (its directory must exist); required\n"
          "  --mib N      size in MiB, 1..65536 (default 64)\n"
          "  --seed N     content variant (another phase of the field; rounds that should\n"
          "               not find the previous round's chunks use different seeds; default 0)\n"
          "  --keep       do not delete FILE afterwards (default: deleted)\n"
          "  --no-fsync   close FILE without an fsync (fsync_s=0)\n"
          "  --help       this text\n");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A smooth field: what a simulation's checkpoint holds (compressible, not trivially).
std::vector<double> smooth_field(size_t count, long seed) {
  std::vector<double> v(count);
  size_t n = static_cast<size_t>(std::cbrt(static_cast<double>(count))) + 1;
  const double pi = 3.14159265358979323846;
  const double phase = 0.01 * static_cast<double>(seed);
  for (size_t i = 0; i < count; ++i) {
    double x = static_cast<double>(i % n) / n, y = static_cast<double>(i / n % n) / n,
           z = static_cast<double>(i / n / n) / n;
    double hot =
        std::exp(-((x - 0.3) * (x - 0.3) + (y - 0.6) * (y - 0.6) + (z - 0.25) * (z - 0.25)) / 0.01);
    v[i] = 300.0 + 20.0 * std::sin(2 * pi * x + phase) * std::cos(2 * pi * y) * std::sin(pi * z) +
           50.0 * hot;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  long mib = 64;
  bool keep = false, do_fsync = true;
  long seed = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if (a == "--path" && i + 1 < argc) {
      path = argv[++i];
    } else if (a == "--mib" && i + 1 < argc) {
      char* end = nullptr;
      mib = strtol(argv[++i], &end, 10);
      if (*end || mib < 1 || mib > 65536) die("--mib expects 1..65536, got '%s'", argv[i]);
    } else if (a == "--seed" && i + 1 < argc) {
      char* end = nullptr;
      seed = strtol(argv[++i], &end, 10);
      if (*end) die("--seed expects an integer, got '%s'", argv[i]);
    } else if (a == "--keep") {
      keep = true;
    } else if (a == "--no-fsync") {
      do_fsync = false;
    } else {
      usage(stderr);
      die("unknown or incomplete option '%s' (see --help)", argv[i]);
    }
  }
  if (path.empty()) {
    usage(stderr);
    die("%s", "--path FILE is required");
  }
  size_t bytes = static_cast<size_t>(mib) << 20;
  std::vector<double> data = smooth_field(bytes / sizeof(double), seed);
  const char* p = reinterpret_cast<const char*>(data.data());

  auto t0 = std::chrono::steady_clock::now();
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    die("cannot create %s (check that its directory exists and is writable)", path.c_str());
  for (size_t off = 0; off < bytes;) {
    ssize_t n = write(fd, p + off, std::min<size_t>(bytes - off, 8 << 20));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die("write to %s failed", path.c_str());
    off += static_cast<size_t>(n);
  }
  double write_s = seconds_since(t0);
  auto t1 = std::chrono::steady_clock::now();
  if (do_fsync && fsync(fd) != 0) die("fsync of %s failed", path.c_str());
  double fsync_s = seconds_since(t1);
  auto t2 = std::chrono::steady_clock::now();
  if (close(fd) != 0) die("close of %s failed", path.c_str());
  double close_s = seconds_since(t2);
  double total_s = seconds_since(t0);
  printf("write_s=%.4f fsync_s=%.4f close_s=%.4f total_s=%.4f bytes=%zu\n", write_s, fsync_s,
         close_s, total_s, bytes);
  if (!keep) unlink(path.c_str());
  return 0;
}
