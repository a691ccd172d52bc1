// bench_ckpt_writer: the checkpoint writer of make bench (tools/bench/bench_limits.sh).
//
// Each MPI rank writes (or reads back) DIR/<name>_r<rank>.bin: its share of a checkpoint
// of --bytes in all, smooth float64 fields (bench_fields.h), in --write-size writes from a
// buffer filled before the timing starts, as a simulation writes arrays it already holds.
// Only the I/O calls are timed (open, write/read, fsync, close), each rank's sum; a barrier
// before and after gives the wall time of the whole checkpoint. Rank 0 prints one line of
// the slowest rank's figures:
//   write: ranks=R bytes=B open_s= write_s= fsync_s= close_s= ckpt_s= wall_s= start_epoch=
//          [next_open_s= next_write_s= next_fsync_s= next_close_s= next_ckpt_s= next_wall_s=]
//   read:  ranks=R bytes=B open_s= read_s= close_s= ckpt_s= wall_s= verified=1
// With --next-after S the job, S seconds after its checkpoint (the computation between
// two), writes its next one, of the next step's fields, into DIR/next/ (a directory a
// step, as applications do), timed the same way: the next_ figures, those of a job's
// checkpoints after its first (the forwarder running, its pages and codec choices warm).
// Read mode compares every byte with the generator and exits 1 naming the file and offset
// of the first difference. Knows nothing about ckptfwd (it is preloaded or not).
#include <fcntl.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "bench_fields.h"

namespace {

struct Options {
  bool read = false;
  std::string dir;
  std::string name = "bench_ckpt";
  size_t total_bytes = 0;
  size_t write_size = 8u << 20;
  bool fsync_files = false;
  double next_after = -1;  // --next-after: seconds before the job's next checkpoint
  int step = 0;            // --step: which step's fields (read mode)
};

int g_rank = 0;

[[noreturn]] void fail(const char* what, const std::string& path) {
  fprintf(stderr, "bench_ckpt_writer[rank %d]: %s %s: %s\n", g_rank, what, path.c_str(),
          errno ? strerror(errno) : "");
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

size_t parse_size(const char* flag, const char* v) {
  char* end = nullptr;
  unsigned long long x = v ? strtoull(v, &end, 10) : 0;
  if (!v || end == v) {
    if (g_rank == 0) fprintf(stderr, "bench_ckpt_writer: %s expects a size like 64M\n", flag);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  switch (*end) {
    case 'K':
      x <<= 10;
      break;
    case 'M':
      x <<= 20;
      break;
    case 'G':
      x <<= 30;
      break;
    default:
      break;
  }
  return static_cast<size_t>(x);
}

void usage() {
  fprintf(stderr,
          "usage: bench_ckpt_writer --mode write|read --dir DIR --bytes SIZE [--fsync]\n"
          "                         [--write-size SIZE] [--name NAME] [--next-after SEC]\n"
          "                         [--step K]\n"
          "  --bytes SIZE       the whole checkpoint (K/M/G suffix), split over the ranks in\n"
          "                     whole planes of 1 MiB (at least one per rank)\n"
          "  --write-size SIZE  bytes per write/read call (default 8M)\n"
          "  --fsync            fsync each file before closing it\n"
          "  --name NAME        files are DIR/NAME_r<rank>.bin (default bench_ckpt)\n"
          "  --next-after SEC   write mode: SEC seconds later write the next step's checkpoint\n"
          "                     into DIR/next/ and report it as next_*\n"
          "  --step K           the fields of step K (default 0; DIR/next/ holds step 1)\n");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--mode" && v) {
      o.read = std::string(v) == "read";
      if (!o.read && std::string(v) != "write") v = nullptr;
      ++i;
    } else if (a == "--dir" && v) {
      o.dir = v, ++i;
    } else if (a == "--name" && v) {
      o.name = v, ++i;
    } else if (a == "--bytes") {
      o.total_bytes = parse_size("--bytes", v), ++i;
    } else if (a == "--write-size") {
      o.write_size = parse_size("--write-size", v), ++i;
    } else if (a == "--next-after" && v) {
      char* end = nullptr;
      o.next_after = strtod(v, &end);
      if (end == v || *end || o.next_after < 0) v = nullptr;
      ++i;
    } else if (a == "--step" && v) {
      char* end = nullptr;
      long k = strtol(v, &end, 10);
      if (end == v || *end || k < 0 || k > 1000000) v = nullptr;
      o.step = static_cast<int>(k);
      ++i;
    } else if (a == "--fsync") {
      o.fsync_files = true;
    } else if (a == "-h" || a == "--help") {
      if (g_rank == 0) usage();
      MPI_Finalize();
      exit(0);
    } else {
      v = nullptr;
    }
    if (!v && a != "--fsync") {
      if (g_rank == 0) {
        fprintf(stderr, "bench_ckpt_writer: bad or incomplete option '%s'\n", a.c_str());
        usage();
      }
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (o.dir.empty() || o.total_bytes == 0 || o.write_size == 0) {
    if (g_rank == 0) usage();
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return o;
}

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Times {
  double open = 0, io = 0, fsync = 0, close = 0;
};

Times write_file(const Options& o, const std::string& path, const std::vector<unsigned char>& buf) {
  Times t;
  double t0 = now();
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  t.open = now() - t0;
  if (fd < 0) fail("cannot create", path);
  for (size_t off = 0; off < buf.size();) {
    size_t n = std::min(o.write_size, buf.size() - off);
    t0 = now();
    ssize_t w = write(fd, buf.data() + off, n);
    t.io += now() - t0;
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("write failed on", path);
    off += static_cast<size_t>(w);
  }
  if (o.fsync_files) {
    t0 = now();
    if (fsync(fd) != 0) fail("fsync failed on", path);
    t.fsync = now() - t0;
  }
  t0 = now();
  if (close(fd) != 0) fail("close failed on", path);
  t.close = now() - t0;
  return t;
}

Times read_file(const Options& o, const std::string& path, const bench::Shape& s) {
  Times t;
  std::vector<unsigned char> got(o.write_size), want(o.write_size);
  double t0 = now();
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  t.open = now() - t0;
  if (fd < 0) fail("cannot open", path);
  size_t off = 0;
  const size_t size = s.file_bytes();
  while (off < size) {
    size_t n = std::min(o.write_size, size - off);
    size_t have = 0;
    while (have < n) {
      t0 = now();
      ssize_t r = read(fd, got.data() + have, n - have);
      t.io += now() - t0;
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) fail("read failed on", path);
      if (r == 0) {
        errno = 0;
        fprintf(stderr, "bench_ckpt_writer[rank %d]: %s is %zu bytes, expected %zu\n", g_rank,
                path.c_str(), off + have, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      have += static_cast<size_t>(r);
    }
    bench::fill(s, off, n, want.data());
    if (memcmp(got.data(), want.data(), n) != 0) {
      size_t i = 0;
      while (got[i] == want[i]) ++i;
      fprintf(stderr, "bench_ckpt_writer[rank %d]: %s differs at byte %zu\n", g_rank, path.c_str(),
              off + i);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    off += n;
  }
  char extra;
  if (read(fd, &extra, 1) != 0) {
    errno = 0;
    fail("has bytes past the expected end:", path);
  }
  t0 = now();
  if (close(fd) != 0) fail("close failed on", path);
  t.close = now() - t0;
  return t;
}

// Each figure of the slowest rank (on rank 0; the others get zeros).
struct Slowest {
  double open = 0, io = 0, fsync = 0, close = 0, sum = 0, wall = 0;
};
Slowest slowest(const Times& t, double wall) {
  double mine[5] = {t.open, t.io, t.fsync, t.close, t.open + t.io + t.fsync + t.close};
  double worst[5] = {};
  MPI_Reduce(mine, worst, 5, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return {worst[0], worst[1], worst[2], worst[3], worst[4], wall};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  Options o = parse(argc, argv);

  bench::Shape s;
  s.rank = g_rank;
  s.nranks = nranks;
  s.nz = static_cast<int>(std::max<size_t>(1, o.total_bytes / nranks / bench::kPlaneBytes));
  s.step = o.step;
  const std::string file = "/" + o.name + "_r" + std::to_string(g_rank) + ".bin";

  std::vector<unsigned char> buf;
  if (!o.read) {
    buf.resize(s.file_bytes());
    bench::fill(s, 0, buf.size(), buf.data());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double w0 = now();
  // Wall-clock start, so a caller can time from here until the job has exited (under
  // ckptfwd: until everything is committed), without the process start and buffer fill.
  timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  const double start_epoch =
      static_cast<double>(rt.tv_sec) + 1e-9 * static_cast<double>(rt.tv_nsec);
  Times t = o.read ? read_file(o, o.dir + file, s) : write_file(o, o.dir + file, buf);
  MPI_Barrier(MPI_COMM_WORLD);
  const double wall = now() - w0;
  Slowest first = slowest(t, wall);

  Slowest next;
  const bool has_next = !o.read && o.next_after >= 0;
  if (has_next) {
    // The computation between two checkpoints, then the next step's fields, filled before
    // the timing as the first's were.
    const std::string dir = o.dir + "/next";
    if (g_rank == 0 && mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) fail("cannot create", dir);
    s.step = o.step + 1;
    bench::fill(s, 0, buf.size(), buf.data());
    const double until = now() + o.next_after;
    while (now() < until) usleep(10000);
    MPI_Barrier(MPI_COMM_WORLD);
    const double n0 = now();
    Times tn = write_file(o, dir + file, buf);
    MPI_Barrier(MPI_COMM_WORLD);
    next = slowest(tn, now() - n0);
  }
  if (g_rank == 0) {
    const size_t total = s.file_bytes() * static_cast<size_t>(nranks);
    if (o.read)
      printf(
          "ranks=%d bytes=%zu open_s=%.6f read_s=%.6f close_s=%.6f ckpt_s=%.6f wall_s=%.6f "
          "verified=1",
          nranks, total, first.open, first.io, first.close, first.sum, first.wall);
    else
      printf(
          "ranks=%d bytes=%zu open_s=%.6f write_s=%.6f fsync_s=%.6f close_s=%.6f "
          "ckpt_s=%.6f wall_s=%.6f start_epoch=%.6f",
          nranks, total, first.open, first.io, first.fsync, first.close, first.sum, first.wall,
          start_epoch);
    if (has_next)
      printf(
          " next_open_s=%.6f next_write_s=%.6f next_fsync_s=%.6f next_close_s=%.6f "
          "next_ckpt_s=%.6f next_wall_s=%.6f",
          next.open, next.io, next.fsync, next.close, next.sum, next.wall);
    printf("\n");
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
