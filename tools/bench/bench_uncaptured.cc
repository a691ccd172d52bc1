// bench_uncaptured: what calls the preload library does not capture cost. Loops over
// open+read+close of a small file, stat, and an open by relative path, and prints the
// time per call of each kind. Run it with and without LD_PRELOAD=libckptfwd.so (with
// CKPTFWD_CAPTURE naming some other directory) and compare: tools/bench/run_bench.sh.
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void usage(FILE* to) {
  fprintf(to,
          "usage: bench_uncaptured [--iterations N] [--dir DIR] [--kind KIND]\n"
          "  Times calls the ckptfwd library does not capture: open+read+close of a small\n"
          "  file in DIR (absolute path), stat of it, and open+close by a relative path\n"
          "  (after chdir DIR). Prints one line per kind:\n"
          "  'kind=<name> ns_per_call=<wall> cpu_ns_per_call=<process CPU time>'\n"
          "  (CPU time is the steadier figure on a busy machine).\n"
          "  --iterations N  loops per kind (default 200000)\n"
          "  --dir DIR       where the small file is made (default /tmp); must not be\n"
          "                  captured (CKPTFWD_CAPTURE pointing elsewhere)\n"
          "  --kind KIND     open_read_close, stat, relative_open_close or all (default)\n");
}

double now_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

std::string g_only = "all";

template <class F>
void time_kind(const char* kind, long n, F&& body) {
  if (g_only != "all" && g_only != kind) return;
  for (long i = 0; i < n / 10 + 1; ++i) body();  // warm up
  double t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  for (long i = 0; i < n; ++i) body();
  double t1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
  printf("kind=%s ns_per_call=%.1f cpu_ns_per_call=%.1f\n", kind,
         (t1 - t0) / static_cast<double>(n), (c1 - c0) / static_cast<double>(n));
}

}  // namespace

int main(int argc, char** argv) {
  long n = 200000;
  std::string dir = "/tmp";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) {
      n = atol(argv[++i]);
    } else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
      dir = argv[++i];
    } else if (!strcmp(argv[i], "--kind") && i + 1 < argc) {
      g_only = argv[++i];
    } else {
      fprintf(stderr, "bench_uncaptured: unknown argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (n <= 0) {
    fprintf(stderr, "bench_uncaptured: --iterations must be positive\n");
    return 2;
  }
  char name[64];
  snprintf(name, sizeof(name), "bench_uncaptured.%ld", static_cast<long>(getpid()));
  std::string file = dir + "/" + name;
  int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || write(fd, "0123456789abcdef", 16) != 16 || close(fd) != 0) {
    fprintf(stderr, "bench_uncaptured: cannot make %s: %s. Fix: pass --dir a writable directory\n",
            file.c_str(), strerror(errno));
    return 1;
  }
  if (chdir(dir.c_str()) != 0) {
    fprintf(stderr, "bench_uncaptured: cannot chdir to %s: %s\n", dir.c_str(), strerror(errno));
    return 1;
  }
  long bad = 0;
  char buf[64];
  time_kind("open_read_close", n, [&] {
    int f = open(file.c_str(), O_RDONLY);
    if (f < 0 || read(f, buf, sizeof(buf)) != 16) ++bad;
    close(f);
  });
  time_kind("stat", n, [&] {
    struct stat st;
    if (stat(file.c_str(), &st) != 0) ++bad;
  });
  time_kind("relative_open_close", n, [&] {
    int f = open(name, O_RDONLY);
    if (f < 0) ++bad;
    close(f);
  });
  unlink(file.c_str());
  if (bad) {
    fprintf(stderr, "bench_uncaptured: %ld calls failed\n", bad);
    return 1;
  }
  return 0;
}
