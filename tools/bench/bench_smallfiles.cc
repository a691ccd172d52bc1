// bench_smallfiles: writes or reads back N files of S bytes, the restart pattern of an
// application that keeps one file per object (or per rank). Run it directly and under
// LD_PRELOAD=libckptfwd.so to compare. The content of every file is computed from its
// index, so a read checks every byte it gets.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string mode, dir;
  uint64_t files = 10000, size = 4096, first = 0;
  int procs = 1;
};

void usage(FILE* out) {
  fprintf(out,
          "usage: bench_smallfiles write|read --dir DIR [--files N] [--size S] [--first I]\n"
          "                        [--procs P]\n"
          "  write  creates DIR/f<index> for index in [I, I+N), S bytes each\n"
          "  read   opens, reads and closes them, checking every byte\n"
          "  --files N   how many files (default 10000)\n"
          "  --size S    bytes per file; suffix K, M or G (default 4096)\n"
          "  --first I   index of the first file (default 0)\n"
          "  --procs P   P processes share the files, each a contiguous slice (default 1)\n"
          "Prints one line: files=<n> bytes=<total> seconds=<wall time of the whole run>.\n"
          "The content is float32 values of a smooth function with noise, computed from the\n"
          "file index: compressible like simulation data, and different in every file.\n");
}

bool parse_size(const char* s, uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return false;
  uint64_t mul = 1;
  if (*end == 'K' || *end == 'k')
    mul = 1ull << 10, ++end;
  else if (*end == 'M' || *end == 'm')
    mul = 1ull << 20, ++end;
  else if (*end == 'G' || *end == 'g')
    mul = 1ull << 30, ++end;
  if (*end) return false;
  out = v * mul;
  return true;
}

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Bytes [off, off+n) of file `index` (off a multiple of 4).
void content(uint64_t index, uint64_t off, uint8_t* p, size_t n) {
  uint64_t first = off / 4;
  size_t words = (n + 3) / 4;
  std::vector<float> v(words);
  for (size_t k = 0; k < words; ++k) {
    uint64_t i = first + k;
    float noise = static_cast<float>(mix(index * 0x9e3779b97f4a7c15ull + i) & 0xff) * 1e-5f;
    v[k] = std::sin(static_cast<float>(i) * 1e-3f + static_cast<float>(index)) + noise;
  }
  memcpy(p, v.data(), n);
}

std::string name_of(const Options& o, uint64_t index) {
  char buf[32];
  snprintf(buf, sizeof(buf), "/f%06llu", static_cast<unsigned long long>(index));
  return o.dir + buf;
}

constexpr size_t kBlock = 4 << 20;

bool write_one(const Options& o, uint64_t index, std::vector<uint8_t>& buf) {
  std::string path = name_of(o, index);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    fprintf(stderr, "bench_smallfiles: cannot create %s: %s\n", path.c_str(), strerror(errno));
    return false;
  }
  for (uint64_t off = 0; off < o.size;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kBlock, o.size - off));
    content(index, off, buf.data(), n);
    ssize_t w = write(fd, buf.data(), n);
    if (w != static_cast<ssize_t>(n)) {
      fprintf(stderr, "bench_smallfiles: write to %s failed: %s\n", path.c_str(),
              w < 0 ? strerror(errno) : "short write");
      close(fd);
      return false;
    }
    off += n;
  }
  if (close(fd) != 0) {
    fprintf(stderr, "bench_smallfiles: close of %s failed: %s\n", path.c_str(), strerror(errno));
    return false;
  }
  return true;
}

bool read_one(const Options& o, uint64_t index, std::vector<uint8_t>& buf,
              std::vector<uint8_t>& want) {
  std::string path = name_of(o, index);
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    fprintf(stderr, "bench_smallfiles: cannot open %s: %s\n", path.c_str(), strerror(errno));
    return false;
  }
  uint64_t off = 0;
  bool ok = true;
  while (ok) {
    ssize_t r = read(fd, buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      fprintf(stderr, "bench_smallfiles: read of %s failed: %s\n", path.c_str(), strerror(errno));
      ok = false;
      break;
    }
    if (r == 0) break;
    if (off + static_cast<uint64_t>(r) > o.size) {
      fprintf(stderr, "bench_smallfiles: %s is longer than %llu bytes\n", path.c_str(),
              static_cast<unsigned long long>(o.size));
      ok = false;
      break;
    }
    // Reads may end anywhere; the expected bytes are computed from a word boundary.
    uint64_t start = off & ~uint64_t{3};
    size_t lead = static_cast<size_t>(off - start);
    content(index, start, want.data(), lead + static_cast<size_t>(r));
    if (memcmp(buf.data(), want.data() + lead, static_cast<size_t>(r)) != 0) {
      fprintf(stderr, "bench_smallfiles: %s differs from the expected bytes in [%llu, %llu)\n",
              path.c_str(), static_cast<unsigned long long>(off),
              static_cast<unsigned long long>(off + r));
      ok = false;
    }
    off += static_cast<uint64_t>(r);
  }
  if (ok && off != o.size) {
    fprintf(stderr, "bench_smallfiles: %s has %llu bytes, expected %llu\n", path.c_str(),
            static_cast<unsigned long long>(off), static_cast<unsigned long long>(o.size));
    ok = false;
  }
  close(fd);
  return ok;
}

// Files [from, to) of this process.
bool run_slice(const Options& o, uint64_t from, uint64_t to) {
  std::vector<uint8_t> buf(std::min<uint64_t>(kBlock, std::max<uint64_t>(o.size, 1)) + 4);
  std::vector<uint8_t> want(buf.size() + 4);
  for (uint64_t i = from; i < to; ++i) {
    bool ok = o.mode == "write" ? write_one(o, i, buf) : read_one(o, i, buf, want);
    if (!ok) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        fprintf(stderr, "bench_smallfiles: %s needs a value\n", what);
        exit(2);
      }
      return argv[++i];
    };
    uint64_t n = 0;
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if (a == "--dir") {
      o.dir = value("--dir");
    } else if (a == "--files" || a == "--size" || a == "--first" || a == "--procs") {
      const char* v = value(a.c_str());
      if (!parse_size(v, n)) {
        fprintf(stderr, "bench_smallfiles: %s: '%s' is not a number\n", a.c_str(), v);
        return 2;
      }
      if (a == "--files") o.files = n;
      if (a == "--size") o.size = n;
      if (a == "--first") o.first = n;
      if (a == "--procs")
        o.procs = static_cast<int>(std::max<uint64_t>(1, std::min<uint64_t>(n, 1024)));
    } else if (o.mode.empty() && (a == "write" || a == "read")) {
      o.mode = a;
    } else {
      fprintf(stderr, "bench_smallfiles: unknown argument '%s'\n", a.c_str());
      usage(stderr);
      return 2;
    }
  }
  if (o.mode.empty() || o.dir.empty()) {
    usage(stderr);
    return 2;
  }
  if (o.mode == "write") mkdir(o.dir.c_str(), 0755);
  auto t0 = std::chrono::steady_clock::now();
  bool ok = true;
  if (o.procs == 1) {
    ok = run_slice(o, o.first, o.first + o.files);
  } else {
    std::vector<pid_t> kids;
    for (int p = 0; p < o.procs; ++p) {
      uint64_t from = o.first + o.files * p / o.procs, to = o.first + o.files * (p + 1) / o.procs;
      pid_t pid = fork();
      if (pid == 0) _exit(run_slice(o, from, to) ? 0 : 1);
      if (pid < 0) {
        perror("bench_smallfiles: fork");
        ok = false;
        break;
      }
      kids.push_back(pid);
    }
    for (pid_t k : kids) {
      int st = 0;
      if (waitpid(k, &st, 0) != k || !WIFEXITED(st) || WEXITSTATUS(st) != 0) ok = false;
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!ok) return 1;
  printf("files=%llu bytes=%llu seconds=%.3f\n", static_cast<unsigned long long>(o.files),
         static_cast<unsigned long long>(o.files * o.size), secs);
  return 0;
}
