// bench_uncaptured: the cost of calls on files ckptfwd does NOT capture, which every
// program it is preloaded into pays (make bench runs it with and without LD_PRELOAD).
// Creates DIR/uncaptured.dat (4 KiB) and times ITERS rounds of each kind of call:
//   open_read_close  open(absolute path) + read 4 KiB + close
//   stat             stat(absolute path)
//   rel_open         open("uncaptured.dat") relative to the working directory (DIR) + close
// Prints one line per kind: "kind=<kind> ns=<nanoseconds per round>".
//   bench_uncaptured --iters N --dir DIR
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

namespace {

double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 1e9 * static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec);
}

int usage(int rc) {
  fprintf(rc ? stderr : stdout,
          "usage: bench_uncaptured --iters N --dir DIR\n"
          "  times open+read+close, stat and a relative open of DIR/uncaptured.dat;\n"
          "  prints 'kind=<kind> ns=<ns per call>' lines\n");
  return rc;
}

[[noreturn]] void die(const char* what, const std::string& path) {
  fprintf(stderr, "bench_uncaptured: %s %s: %s\n", what, path.c_str(), strerror(errno));
  exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  long iters = 0;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") return usage(0);
    if (i + 1 >= argc) return usage(2);
    if (a == "--iters")
      iters = strtol(argv[++i], nullptr, 10);
    else if (a == "--dir")
      dir = argv[++i];
    else
      return usage(2);
  }
  if (iters <= 0 || dir.empty()) return usage(2);
  const std::string path = dir + "/uncaptured.dat";
  char buf[4096];
  memset(buf, 'u', sizeof(buf));
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, buf, sizeof(buf)) != static_cast<ssize_t>(sizeof(buf)) || close(fd))
    die("cannot create", path);
  if (chdir(dir.c_str()) != 0) die("cannot chdir to", dir);

  double t0 = now_ns();
  for (long i = 0; i < iters; ++i) {
    fd = open(path.c_str(), O_RDONLY);
    if (fd < 0 || read(fd, buf, sizeof(buf)) != static_cast<ssize_t>(sizeof(buf)))
      die("open/read", path);
    close(fd);
  }
  printf("kind=open_read_close ns=%.1f\n", (now_ns() - t0) / static_cast<double>(iters));

  struct stat st;
  t0 = now_ns();
  for (long i = 0; i < iters; ++i)
    if (stat(path.c_str(), &st) != 0) die("stat", path);
  printf("kind=stat ns=%.1f\n", (now_ns() - t0) / static_cast<double>(iters));

  t0 = now_ns();
  for (long i = 0; i < iters; ++i) {
    fd = open("uncaptured.dat", O_RDONLY);
    if (fd < 0) die("relative open of", path);
    close(fd);
  }
  printf("kind=rel_open ns=%.1f\n", (now_ns() - t0) / static_cast<double>(iters));
  unlink(path.c_str());
  return 0;
}
