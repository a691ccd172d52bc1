// bench_patterns: one checkpoint file written in one of the patterns real checkpoint code
// uses, timed, then read back and checked. Run it with and without LD_PRELOAD=libckptfwd.so
// (CKPTFWD_CAPTURE on --dir) to compare (tools/bench/bench_patterns.sh).
//
// Every pattern writes the same bytes (a function of the offset), so any two runs' files
// compare equal, and the read-back checks every byte. The time is the pattern's calls from
// the first open to the last close (or rename), the fsync included with --fsync; not the
// read-back, not the process's start or exit.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Patterns {
  const char* name;
  const char* what;
};
constexpr Patterns kPatterns[] = {
    {"write", "write(2) in 64 KiB pieces"},
    {"pwrite_scatter", "pwrite(2) of 100,000-byte pieces, back to front"},
    {"fwrite", "fwrite(3) in 64 KiB pieces"},
    {"writev", "writev(2) of 4 x 16 KiB"},
    {"append_reopen", "O_APPEND, half, close, reopen O_APPEND, the other half"},
    {"ofstream", "std::ofstream::write in 64 KiB pieces"},
    {"trunc_rename", "ftruncate of a temporary file, two pwrites, rename"},
    {"mmap", "mmap(MAP_SHARED) of an ftruncated file, memcpy, munmap"},
    {"odirect", "O_DIRECT, 1 MiB aligned writes (n/a where refused)"},
    {"copy_range", "copy_file_range(2) from an uncaptured file"},
};

void usage(FILE* to) {
  fprintf(to,
          "usage: bench_patterns --dir DIR --pattern NAME [--size BYTES] [--fsync]\n"
          "                      [--source FILE] [--warm FILE]\n"
          "  Writes DIR/NAME.dat (BYTES, default 64 MiB) in pattern NAME, reads it back and\n"
          "  checks every byte; prints 'pattern=NAME seconds=S bytes=N' (S: the pattern's\n"
          "  calls, with the fsync when --fsync), or 'pattern=NAME n/a=<why>' where the file\n"
          "  system refuses it (O_DIRECT on tmpfs). Exit 1 on a wrong byte or a failed call.\n"
          "  --source FILE  copy_range's source, outside the captured directory (made with\n"
          "                 the pattern's bytes when missing)\n"
          "  --warm FILE    before the clock starts, write the bytes once to FILE (outside the\n"
          "                 captured directory; removed again), as an application's later\n"
          "                 checkpoint from the same arrays follows its first one\n"
          "  --list         the patterns, one per line: NAME<TAB>what it does\n"
          "usage: bench_patterns --compute MILLIONS\n"
          "  An application's compute step instead: MILLIONS million dependent floating-point\n"
          "  additions, no I/O; prints 'compute seconds=S'.\n");
}

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

unsigned char byte_of(uint64_t off) {
  return static_cast<unsigned char>((off * 131 + (off >> 12) * 7 + 3) & 0xff);
}

void fill(unsigned char* b, uint64_t off, size_t n) {
  for (size_t i = 0; i < n; ++i) b[i] = byte_of(off + i);
}

[[noreturn]] void die(const char* what, const std::string& path) {
  fprintf(stderr, "bench_patterns: %s %s: %s\n", what, path.c_str(), strerror(errno));
  exit(1);
}

void write_all(int fd, const unsigned char* b, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, b, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) die("write", path);
    b += w;
    n -= static_cast<size_t>(w);
  }
}

void pwrite_all(int fd, const unsigned char* b, size_t n, uint64_t off, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, b, n, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) die("pwrite", path);
    b += w;
    n -= static_cast<size_t>(w);
    off += static_cast<uint64_t>(w);
  }
}

void sync_close(int fd, bool do_fsync, const std::string& path) {
  if (do_fsync && ::fsync(fd) != 0) die("fsync", path);
  if (::close(fd) != 0) die("close", path);
}

// The source of copy_range: the pattern's bytes, made once (not timed).
void make_source(const std::string& src, uint64_t size) {
  struct stat st;
  if (::stat(src.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) == size) return;
  int fd = ::open(src.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) die("open", src);
  std::vector<unsigned char> b(1 << 20);
  for (uint64_t off = 0; off < size; off += b.size()) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(b.size(), size - off));
    fill(b.data(), off, n);
    write_all(fd, b.data(), n, src);
  }
  if (::close(fd) != 0) die("close", src);
}

// The bytes written once to a scratch file and the file removed (not timed): the kernel
// has read the application's buffer before, as for a later checkpoint of a long-lived
// process. On a virtual machine with shadow page tables the first read of fresh pages
// through the process's mapping costs several times a later one (docs/benchmarks.md, (j)).
void warm_up(const std::string& scratch, const unsigned char* data, uint64_t size) {
  int fd = ::open(scratch.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) die("open", scratch);
  write_all(fd, data, static_cast<size_t>(size), scratch);
  if (::close(fd) != 0 || ::unlink(scratch.c_str()) != 0) die("close or unlink", scratch);
}

// Writes path in pattern p from data (the file's bytes, made before the clock starts:
// the time is the calls'); false with *na when the file system refuses the pattern.
bool write_pattern(const std::string& p, const std::string& path, const unsigned char* data,
                   uint64_t size, bool do_fsync, const std::string& source, std::string* na) {
  constexpr size_t kPiece = 64 << 10;
  // [from, to) in 64 KiB writes.
  auto write_range = [&](int fd, uint64_t from, uint64_t to) {
    for (uint64_t off = from; off < to; off += kPiece) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(kPiece, to - off));
      write_all(fd, data + off, n, path);
    }
  };
  if (p == "write") {
    int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) die("open", path);
    write_range(fd, 0, size);
    sync_close(fd, do_fsync, path);
  } else if (p == "append_reopen") {
    int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) die("open", path);
    write_range(fd, 0, size / 2);
    if (::close(fd) != 0) die("close", path);
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) die("reopen", path);
    write_range(fd, size / 2, size);
    sync_close(fd, do_fsync, path);
  } else if (p == "pwrite_scatter") {
    constexpr size_t kScatter = 100000;
    int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) die("open", path);
    for (uint64_t k = (size + kScatter - 1) / kScatter; k-- > 0;) {
      const uint64_t off = k * kScatter;
      size_t n = static_cast<size_t>(std::min<uint64_t>(kScatter, size - off));
      pwrite_all(fd, data + off, n, off, path);
    }
    sync_close(fd, do_fsync, path);
  } else if (p == "fwrite") {
    FILE* f = fopen(path.c_str(), "we");
    if (!f) die("fopen", path);
    for (uint64_t off = 0; off < size; off += kPiece) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(kPiece, size - off));
      if (fwrite(data + off, 1, n, f) != n) die("fwrite", path);
    }
    if (do_fsync && (fflush(f) != 0 || ::fsync(fileno(f)) != 0)) die("fsync", path);
    if (fclose(f) != 0) die("fclose", path);
  } else if (p == "writev") {
    int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) die("open", path);
    for (uint64_t off = 0; off < size; off += kPiece) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(kPiece, size - off));
      iovec iov[4];
      size_t q = n / 4;
      for (int i = 0; i < 4; ++i)
        iov[i] = {const_cast<unsigned char*>(data + off + i * q), i == 3 ? n - 3 * q : q};
      ssize_t w = ::writev(fd, iov, 4);
      if (w != static_cast<ssize_t>(n)) die("writev", path);
    }
    sync_close(fd, do_fsync, path);
  } else if (p == "ofstream") {
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      if (!out) die("ofstream", path);
      for (uint64_t off = 0; off < size; off += kPiece) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(kPiece, size - off));
        out.write(reinterpret_cast<const char*>(data + off), static_cast<std::streamsize>(n));
      }
      out.close();
      if (!out) die("ofstream write", path);
    }
    if (do_fsync) {  // a stream has no fsync: the file is opened again for it
      int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) die("open for fsync", path);
      sync_close(fd, true, path);
    }
  } else if (p == "trunc_rename") {
    const std::string tmp = path + ".tmp";
    int fd = ::open(tmp.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) die("open", tmp);
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0) die("ftruncate", tmp);
    const uint64_t half = size / 2;
    pwrite_all(fd, data + half, static_cast<size_t>(size - half), half, tmp);
    pwrite_all(fd, data, static_cast<size_t>(half), 0, tmp);
    sync_close(fd, do_fsync, tmp);
    if (::rename(tmp.c_str(), path.c_str()) != 0) die("rename", path);
  } else if (p == "mmap") {
    int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0) die("open", path);
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0) die("ftruncate", path);
    void* m = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) die("mmap", path);
    auto* dst = static_cast<unsigned char*>(m);
    for (uint64_t off = 0; off < size; off += kPiece) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(kPiece, size - off));
      memcpy(dst + off, data + off, n);
    }
    if (do_fsync && ::msync(m, size, MS_SYNC) != 0) die("msync", path);
    if (::munmap(m, size) != 0) die("munmap", path);
    sync_close(fd, do_fsync, path);
  } else if (p == "odirect") {
    constexpr size_t kBlock = 1 << 20;
    int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_DIRECT | O_CLOEXEC, 0644);
    if (fd < 0) {
      if (errno != EINVAL) die("open O_DIRECT", path);
      *na = "O_DIRECT refused here";
      return false;
    }
    const uint64_t whole = size / kBlock * kBlock;
    for (uint64_t off = 0; off < whole; off += kBlock) {
      ssize_t w = ::write(fd, data + off, kBlock);  // (data is page aligned)
      if (w < 0 && errno == EINVAL && off == 0) {
        ::close(fd);
        ::unlink(path.c_str());
        *na = "O_DIRECT writes refused here";
        return false;
      }
      if (w != static_cast<ssize_t>(kBlock)) die("write O_DIRECT", path);
    }
    if (whole < size) {  // the tail through a plain descriptor, as real codes do
      if (::close(fd) != 0) die("close", path);
      fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) die("open", path);
      pwrite_all(fd, data + whole, static_cast<size_t>(size - whole), whole, path);
    }
    sync_close(fd, do_fsync, path);
  } else if (p == "copy_range") {
    int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) die("open", source);
    int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) die("open", path);
    for (uint64_t left = size; left > 0;) {
      ssize_t c = ::copy_file_range(in, nullptr, fd, nullptr, left, 0);
      if (c < 0 && errno == EINTR) continue;
      if (c <= 0) die("copy_file_range", path);
      left -= static_cast<uint64_t>(c);
    }
    ::close(in);
    sync_close(fd, do_fsync, path);
  } else {
    fprintf(stderr, "bench_patterns: unknown pattern %s (--list)\n", p.c_str());
    exit(2);
  }
  return true;
}

// Reads path back and counts the bytes that differ from the pattern (a short file counts
// its missing bytes).
uint64_t check(const std::string& path, uint64_t size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("open for the read-back", path);
  std::vector<unsigned char> b(1 << 20), want(1 << 20);
  uint64_t off = 0, bad = 0;
  for (;;) {
    ssize_t r = ::read(fd, b.data(), b.size());
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) die("read", path);
    if (r == 0) break;
    fill(want.data(), off, static_cast<size_t>(r));
    for (ssize_t i = 0; i < r; ++i) bad += b[i] != want[i] || off + i >= size;
    off += static_cast<uint64_t>(r);
  }
  ::close(fd);
  return bad + (off < size ? size - off : 0);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir, pattern, source, warm;
  uint64_t size = 64ull << 20;
  bool do_fsync = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage(stderr);
        exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if (a == "--list") {
      for (const Patterns& p : kPatterns) printf("%s\t%s\n", p.name, p.what);
      return 0;
    } else if (a == "--dir") {
      dir = val();
    } else if (a == "--pattern") {
      pattern = val();
    } else if (a == "--size") {
      size = strtoull(val().c_str(), nullptr, 10);
    } else if (a == "--source") {
      source = val();
    } else if (a == "--fsync") {
      do_fsync = true;
    } else if (a == "--warm") {
      warm = val();
    } else if (a == "--compute") {
      const long millions = strtol(val().c_str(), nullptr, 10);
      if (millions <= 0) {
        usage(stderr);
        return 2;
      }
      volatile double x = 0;  // (volatile: every addition is done, in order)
      const double t0 = now_s();
      for (long k = 0; k < millions * 1000000; ++k) x = x + 1e-9 * static_cast<double>(k);
      printf("compute seconds=%.6f\n", now_s() - t0);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (dir.empty() || pattern.empty() || size == 0) {
    usage(stderr);
    return 2;
  }
  if (pattern == "copy_range") {
    if (source.empty()) {
      fprintf(stderr, "bench_patterns: copy_range needs --source FILE\n");
      return 2;
    }
    make_source(source, size);
  }
  const std::string path = dir + "/" + pattern + ".dat";
  void* raw = nullptr;
  if (posix_memalign(&raw, 4096, size) != 0) die("posix_memalign", path);
  auto* data = static_cast<unsigned char*>(raw);
  fill(data, 0, size);
  if (!warm.empty()) warm_up(warm, data, size);
  std::string na;
  const double t0 = now_s();
  const bool done = write_pattern(pattern, path, data, size, do_fsync, source, &na);
  const double t1 = now_s();
  if (!done) {
    printf("pattern=%s n/a=%s\n", pattern.c_str(), na.c_str());
    return 0;
  }
  const uint64_t bad = check(path, size);
  if (bad) {
    fprintf(stderr, "bench_patterns: %s: %llu bytes wrong in the read-back\n", path.c_str(),
            static_cast<unsigned long long>(bad));
    return 1;
  }
  printf("pattern=%s seconds=%.6f bytes=%llu\n", pattern.c_str(), t1 - t0,
         static_cast<unsigned long long>(size));
  return 0;
}
