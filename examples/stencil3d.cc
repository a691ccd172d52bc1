// stencil3d: a small 3-D heat/diffusion code that checkpoints the way real MPI codes do.
//
// It exists to show (and test) ckptfwd with an application that knows nothing about it:
// - two smooth float64 fields (temperature, concentration) on an nx*ny*nz block per rank,
//   decomposed along z over the ranks, halos exchanged with MPI_Sendrecv;
// - every K steps each rank writes ONE raw binary file DIR/ckpt_<step>_r<rank>.bin through
//   stdio (or POSIX with --io posix), to "<name>.tmp" first and then rename()d into place,
//   so a crash never leaves a half-written file under the final name;
// - --restart scans DIR with opendir/readdir (std::filesystem) for the newest step that has
//   a complete file for every rank, and reads it back with open/read;
// - --out FILE gets a one-line digest of the final global state (hash + sum), so a run
//   restarted from a checkpoint can be compared with an uninterrupted one.
//
// Restart is bit-exact: the state is exactly (step, temperature, concentration), the update
// uses the same arithmetic in the same order whether or not the run was restarted, and the
// source term depends only on the global cell index and the step number.
//
// File layout (little endian, see demo.schema for the same in ckptfwd's schema language):
//   char magic[8] "STNCL3D\0" | int32 version=1 | int32 rank | int32 nranks
//   int32 nx | int32 ny | int32 nz | int64 step                 (40 bytes)
//   float64 temperature[nz][ny][nx] | float64 concentration[nz][ny][nx]
//   uint64 checksum (word hash of everything before it)
//
// --dump-values DIR: with each checkpoint, the values it holds as text (DIR/<name>.txt, one
// "field value..." line per field, doubles with 17 digits so they read back exactly),
// printed from memory rather than from the file, so tests can check a reader of the file.
#include <fcntl.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

constexpr char kMagic[8] = {'S', 'T', 'N', 'C', 'L', '3', 'D', '\0'};
constexpr int32_t kVersion = 1;
constexpr size_t kHeaderBytes = 40;

struct Options {
  int steps = 40;
  int ckpt_every = 0;  // 0: never checkpoint
  std::string ckpt_dir = "ckpt";
  bool restart = false;
  int nx = 48, ny = 48, nz = 48;
  std::string out;
  int keep = 0;  // >0: delete checkpoints older than the newest `keep`
  bool fsync_ckpt = false;
  bool posix_io = false;  // write with open/write instead of fopen/fwrite
  bool quiet = false;
  std::string dump_dir;  // --dump-values: the values of each checkpoint as text
};

int g_rank = 0, g_nranks = 1;

[[noreturn]] void die(const char* fmt, const std::string& a = "", const std::string& b = "") {
  fprintf(stderr, "stencil3d[rank %d]: ", g_rank);
  fprintf(stderr, fmt, a.c_str(), b.c_str());
  fputc('\n', stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

void usage() {
  if (g_rank == 0)
    fprintf(stderr,
            "usage: stencil3d [--steps N] [--ckpt-every K] [--ckpt-dir DIR] [--restart]\n"
            "                 [--size NX NY NZ] [--out FILE] [--keep N] [--fsync]\n"
            "                 [--io stdio|posix] [--quiet] [--dump-values DIR]\n"
            "  --steps N        run until global step N (default 40)\n"
            "  --ckpt-every K   write a checkpoint after every K-th step (default 0: never)\n"
            "  --ckpt-dir DIR   checkpoint directory (default ./ckpt), created if missing\n"
            "  --restart        continue from the newest complete checkpoint in DIR\n"
            "  --size NX NY NZ  cells per rank (default 48 48 48); ranks stack along z\n"
            "  --out FILE       rank 0 writes the final digest line to FILE\n"
            "  --keep N         keep only the newest N checkpoints (default 0: keep all)\n"
            "  --fsync          fsync each checkpoint file before closing it\n"
            "  --io posix       write checkpoints with open/write instead of fopen/fwrite\n"
            "  --dump-values DIR  also write each checkpoint's values as text to\n"
            "                   DIR/ckpt_<step>_r<rank>.txt (for tests of checkpoint readers)\n");
}

int parse_int_arg(const char* flag, const char* v, int lo, int hi) {
  char* end = nullptr;
  long x = v ? strtol(v, &end, 10) : 0;
  if (!v || *end || x < lo || x > hi)
    die("%s expects an integer in range, got '%s' (see --help)", flag, v ? v : "(missing)");
  return static_cast<int>(x);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--steps") {
      o.steps = parse_int_arg("--steps", next(), 0, 100000000);
    } else if (a == "--ckpt-every") {
      o.ckpt_every = parse_int_arg("--ckpt-every", next(), 0, 100000000);
    } else if (a == "--ckpt-dir") {
      const char* v = next();
      if (!v || !*v) die("--ckpt-dir expects a directory%s%s");
      o.ckpt_dir = v;
    } else if (a == "--restart") {
      o.restart = true;
    } else if (a == "--size") {
      o.nx = parse_int_arg("--size", next(), 3, 4096);
      o.ny = parse_int_arg("--size", next(), 3, 4096);
      o.nz = parse_int_arg("--size", next(), 3, 4096);
    } else if (a == "--out") {
      const char* v = next();
      if (!v || !*v) die("--out expects a file name%s%s");
      o.out = v;
    } else if (a == "--keep") {
      o.keep = parse_int_arg("--keep", next(), 0, 1000000);
    } else if (a == "--fsync") {
      o.fsync_ckpt = true;
    } else if (a == "--io") {
      const char* v = next();
      std::string m = v ? v : "";
      if (m != "stdio" && m != "posix") die("--io expects stdio or posix, got '%s'%s", m);
      o.posix_io = (m == "posix");
    } else if (a == "--dump-values") {
      const char* v = next();
      if (!v || !*v) die("--dump-values expects a directory%s%s");
      o.dump_dir = v;
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "-h" || a == "--help") {
      usage();
      MPI_Finalize();
      exit(0);
    } else {
      usage();
      die("unknown option '%s'%s", a);
    }
  }
  return o;
}

// A fast 64-bit hash over 8-byte words (FNV-1a style with an extra shift to mix high bits
// down). Used for the per-file checksum and the run digest; byte counts are multiples of 8.
uint64_t hash_words(uint64_t h, const void* data, size_t bytes) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  return h;
}
constexpr uint64_t kHashSeed = 0xcbf29ce484222325ull;

// The local block with one ghost plane below (k=0) and above (k=nz+1) for the z halo.
struct Block {
  int nx, ny, nz;
  int z0;  // global z index of the first interior plane
  std::vector<double> t, c, t_next, c_next, source;
  size_t plane() const { return static_cast<size_t>(nx) * ny; }
  size_t interior() const { return plane() * nz; }
  size_t idx(int i, int j, int k) const {
    return i + static_cast<size_t>(nx) * (j + static_cast<size_t>(ny) * k);
  }
  double* t_interior() { return t.data() + plane(); }
  double* c_interior() { return c.data() + plane(); }
};

void init_block(Block& b, const Options& o) {
  b.nx = o.nx;
  b.ny = o.ny;
  b.nz = o.nz;
  b.z0 = g_rank * o.nz;
  size_t n = b.plane() * (b.nz + 2);
  b.t.assign(n, 0.0);
  b.c.assign(n, 0.0);
  b.t_next.assign(n, 0.0);
  b.c_next.assign(n, 0.0);
  b.source.assign(n, 0.0);
  const double NX = o.nx, NY = o.ny, NZ = static_cast<double>(o.nz) * g_nranks;
  const double pi = 3.14159265358979323846;
  for (int k = 1; k <= b.nz; ++k)
    for (int j = 0; j < b.ny; ++j)
      for (int i = 0; i < b.nx; ++i) {
        double x = (i + 0.5) / NX, y = (j + 0.5) / NY, z = (b.z0 + k - 1 + 0.5) / NZ;
        double hot = std::exp(
            -((x - 0.3) * (x - 0.3) + (y - 0.6) * (y - 0.6) + (z - 0.25) * (z - 0.25)) / 0.01);
        b.t[b.idx(i, j, k)] =
            300.0 + 20.0 * std::sin(2 * pi * x) * std::cos(2 * pi * y) * std::sin(pi * z) +
            50.0 * hot;
        b.c[b.idx(i, j, k)] = 0.5 + 0.25 * std::cos(2 * pi * (x + y)) * std::cos(pi * z);
        // A fixed heater near the upper middle; its strength varies with the step.
        b.source[b.idx(i, j, k)] = std::exp(
            -((x - 0.5) * (x - 0.5) + (y - 0.5) * (y - 0.5) + (z - 0.7) * (z - 0.7)) / 0.02);
      }
}

void exchange_halos(Block& b) {
  const int below = g_rank > 0 ? g_rank - 1 : MPI_PROC_NULL;
  const int above = g_rank + 1 < g_nranks ? g_rank + 1 : MPI_PROC_NULL;
  const int n = static_cast<int>(b.plane());
  for (std::vector<double>* f : {&b.t, &b.c}) {
    double* a = f->data();
    // Send my top interior plane up, receive my bottom ghost from below; then the reverse.
    MPI_Sendrecv(a + b.plane() * b.nz, n, MPI_DOUBLE, above, 1, a, n, MPI_DOUBLE, below, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(a + b.plane(), n, MPI_DOUBLE, below, 2, a + b.plane() * (b.nz + 1), n, MPI_DOUBLE,
                 above, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    // Zero-flux boundary at the global bottom and top: the ghost mirrors the interior.
    if (below == MPI_PROC_NULL) memcpy(a, a + b.plane(), b.plane() * sizeof(double));
    if (above == MPI_PROC_NULL)
      memcpy(a + b.plane() * (b.nz + 1), a + b.plane() * b.nz, b.plane() * sizeof(double));
  }
}

// One explicit step: diffusion of both fields, exchange between them, a pulsing heater.
// x and y boundaries are zero-flux (neighbour index clamped).
void step_block(Block& b, long step) {
  const double at = 0.12, ac = 0.08, kx = 0.01;
  const double heat = 2.0 * std::sin(0.05 * static_cast<double>(step));
  for (int k = 1; k <= b.nz; ++k)
    for (int j = 0; j < b.ny; ++j) {
      const int jm = j > 0 ? j - 1 : 0, jp = j + 1 < b.ny ? j + 1 : j;
      for (int i = 0; i < b.nx; ++i) {
        const int im = i > 0 ? i - 1 : 0, ip = i + 1 < b.nx ? i + 1 : i;
        const size_t c0 = b.idx(i, j, k);
        const double t = b.t[c0], c = b.c[c0];
        const double lt = b.t[b.idx(im, j, k)] + b.t[b.idx(ip, j, k)] + b.t[b.idx(i, jm, k)] +
                          b.t[b.idx(i, jp, k)] + b.t[b.idx(i, j, k - 1)] + b.t[b.idx(i, j, k + 1)] -
                          6.0 * t;
        const double lc = b.c[b.idx(im, j, k)] + b.c[b.idx(ip, j, k)] + b.c[b.idx(i, jm, k)] +
                          b.c[b.idx(i, jp, k)] + b.c[b.idx(i, j, k - 1)] + b.c[b.idx(i, j, k + 1)] -
                          6.0 * c;
        const double ex = kx * (c * 600.0 - t);
        b.t_next[c0] = t + at * lt + 0.1 * ex + heat * b.source[c0];
        b.c_next[c0] = c + ac * lc - 0.0001 * ex;
      }
    }
  b.t.swap(b.t_next);
  b.c.swap(b.c_next);
}

std::string ckpt_name(const Options& o, long step, int rank) {
  return o.ckpt_dir + "/ckpt_" + std::to_string(step) + "_r" + std::to_string(rank) + ".bin";
}

void fill_header(unsigned char* h, const Block& b, long step) {
  memset(h, 0, kHeaderBytes);
  memcpy(h, kMagic, 8);
  int32_t v[6] = {kVersion, g_rank, g_nranks, b.nx, b.ny, b.nz};
  memcpy(h + 8, v, sizeof v);
  int64_t s = step;
  memcpy(h + 32, &s, 8);
}

void write_all_fd(int fd, const void* p, size_t n, const std::string& path) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) die("cannot write checkpoint %s: %s", path, strerror(w < 0 ? errno : EIO));
    c += w;
    n -= static_cast<size_t>(w);
  }
}

// The text twin of a checkpoint (--dump-values): every field of the file in file order.
void dump_values(const Options& o, Block& b, long step, uint64_t checksum) {
  const std::string path =
      o.dump_dir + "/ckpt_" + std::to_string(step) + "_r" + std::to_string(g_rank) + ".txt";
  FILE* f = fopen(path.c_str(), "w");
  if (!f) die("cannot create %s: %s", path, strerror(errno));
  fprintf(f, "magic");
  for (char c : kMagic) fprintf(f, " %d", c);
  fprintf(f, "\nversion %d\nrank %d\nnranks %d\nnx %d\nny %d\nnz %d\nstep %ld\n", kVersion, g_rank,
          g_nranks, b.nx, b.ny, b.nz, step);
  for (const char* name : {"temperature", "concentration"}) {
    const double* v = name[0] == 't' ? b.t_interior() : b.c_interior();
    fprintf(f, "%s", name);
    for (size_t i = 0; i < b.interior(); ++i) fprintf(f, " %.17g", v[i]);
    fprintf(f, "\n");
  }
  fprintf(f, "checksum %llu\n", static_cast<unsigned long long>(checksum));
  if (fclose(f) != 0) die("cannot write %s: %s", path, strerror(errno));
}

// Writes this rank's checkpoint for `step` to <final>.tmp, then renames it into place.
// Returns the bytes written.
size_t write_checkpoint(const Options& o, Block& b, long step) {
  const std::string final_path = ckpt_name(o, step, g_rank);
  const std::string tmp = final_path + ".tmp";
  unsigned char header[kHeaderBytes];
  fill_header(header, b, step);
  const size_t field_bytes = b.interior() * sizeof(double);
  uint64_t sum = hash_words(kHashSeed, header, kHeaderBytes);
  sum = hash_words(sum, b.t_interior(), field_bytes);
  sum = hash_words(sum, b.c_interior(), field_bytes);

  if (o.posix_io) {
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) die("cannot create checkpoint %s: %s", tmp, strerror(errno));
    write_all_fd(fd, header, kHeaderBytes, tmp);
    write_all_fd(fd, b.t_interior(), field_bytes, tmp);
    write_all_fd(fd, b.c_interior(), field_bytes, tmp);
    write_all_fd(fd, &sum, sizeof sum, tmp);
    if (o.fsync_ckpt && fsync(fd) != 0)
      die("fsync of checkpoint %s failed: %s", tmp, strerror(errno));
    if (close(fd) != 0) die("close of checkpoint %s failed: %s", tmp, strerror(errno));
  } else {
    FILE* f = fopen(tmp.c_str(), "wb");
    if (!f) die("cannot create checkpoint %s: %s", tmp, strerror(errno));
    if (fwrite(header, 1, kHeaderBytes, f) != kHeaderBytes ||
        fwrite(b.t_interior(), 1, field_bytes, f) != field_bytes ||
        fwrite(b.c_interior(), 1, field_bytes, f) != field_bytes ||
        fwrite(&sum, 1, sizeof sum, f) != sizeof sum || fflush(f) != 0)
      die("cannot write checkpoint %s: %s", tmp, strerror(errno));
    if (o.fsync_ckpt && fsync(fileno(f)) != 0)
      die("fsync of checkpoint %s failed: %s", tmp, strerror(errno));
    if (fclose(f) != 0) die("close of checkpoint %s failed: %s", tmp, strerror(errno));
  }
  if (rename(tmp.c_str(), final_path.c_str()) != 0)
    die("cannot rename %s into place: %s", tmp, strerror(errno));
  if (!o.dump_dir.empty()) dump_values(o, b, step, sum);

  if (o.keep > 0 && o.ckpt_every > 0) {
    long old = step - static_cast<long>(o.keep) * o.ckpt_every;
    if (old > 0) {
      std::string victim = ckpt_name(o, old, g_rank);
      if (unlink(victim.c_str()) != 0 && errno != ENOENT)
        die("cannot remove old checkpoint %s: %s", victim, strerror(errno));
    }
  }
  return kHeaderBytes + 2 * field_bytes + sizeof sum;
}

// Rank 0 lists the directory and picks the newest step for which every rank has its file.
// Returns -1 when there is none.
long find_newest_complete_step(const Options& o) {
  std::map<long, std::set<int>> seen;
  std::error_code ec;
  std::filesystem::directory_iterator it(o.ckpt_dir, ec);
  if (ec) return -1;
  for (const auto& e : it) {
    const std::string name = e.path().filename().string();
    long step = -1;
    int rank = -1;
    char tail[8] = {0};
    // Accept exactly ckpt_<step>_r<rank>.bin (not the .tmp of an interrupted write).
    if (sscanf(name.c_str(), "ckpt_%ld_r%d.%7s", &step, &rank, tail) == 3 &&
        strcmp(tail, "bin") == 0 && step >= 0 && rank >= 0 && rank < g_nranks &&
        name == "ckpt_" + std::to_string(step) + "_r" + std::to_string(rank) + ".bin")
      seen[step].insert(rank);
  }
  for (auto it2 = seen.rbegin(); it2 != seen.rend(); ++it2)
    if (static_cast<int>(it2->second.size()) == g_nranks) return it2->first;
  return -1;
}

bool read_all_fd(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// Reads and validates this rank's file; on any problem prints why and returns false.
bool read_checkpoint(const Options& o, Block& b, long step) {
  const std::string path = ckpt_name(o, step, g_rank);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "stencil3d[rank %d]: cannot open %s: %s\n", g_rank, path.c_str(),
            strerror(errno));
    return false;
  }
  unsigned char header[kHeaderBytes], expect[kHeaderBytes];
  fill_header(expect, b, step);
  const size_t field_bytes = b.interior() * sizeof(double);
  uint64_t stored = 0;
  bool ok = read_all_fd(fd, header, kHeaderBytes);
  if (ok && memcmp(header, expect, kHeaderBytes) != 0) {
    fprintf(
        stderr,
        "stencil3d[rank %d]: %s has a different header (magic/rank/ranks/size/step); restart with "
        "the same -n and --size as the run that wrote it\n",
        g_rank, path.c_str());
    close(fd);
    return false;
  }
  ok = ok && read_all_fd(fd, b.t_interior(), field_bytes) &&
       read_all_fd(fd, b.c_interior(), field_bytes) && read_all_fd(fd, &stored, sizeof stored);
  char extra;
  const bool trailing = ok && read(fd, &extra, 1) > 0;
  close(fd);
  if (!ok || trailing) {
    fprintf(stderr, "stencil3d[rank %d]: %s is %s than a checkpoint of this size\n", g_rank,
            path.c_str(), ok ? "longer" : "shorter");
    return false;
  }
  uint64_t sum = hash_words(kHashSeed, header, kHeaderBytes);
  sum = hash_words(sum, b.t_interior(), field_bytes);
  sum = hash_words(sum, b.c_interior(), field_bytes);
  if (sum != stored) {
    fprintf(stderr, "stencil3d[rank %d]: %s fails its checksum (corrupt file)\n", g_rank,
            path.c_str());
    return false;
  }
  return true;
}

// Digest of the global state: a hash over every rank's fields in rank order plus the global
// sum added in rank order, so equal digests mean bit-identical states.
std::string global_digest(Block& b, long step) {
  const size_t field_bytes = b.interior() * sizeof(double);
  uint64_t h = hash_words(kHashSeed, b.t_interior(), field_bytes);
  h = hash_words(h, b.c_interior(), field_bytes);
  double s = 0.0;
  const double* t = b.t_interior();
  const double* c = b.c_interior();
  for (size_t i = 0; i < b.interior(); ++i) s += t[i] + c[i];
  std::vector<uint64_t> hs(g_nranks);
  std::vector<double> ss(g_nranks);
  MPI_Gather(&h, 1, MPI_UINT64_T, hs.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  MPI_Gather(&s, 1, MPI_DOUBLE, ss.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (g_rank != 0) return "";
  uint64_t all = hash_words(kHashSeed, hs.data(), hs.size() * sizeof(uint64_t));
  double total = 0.0;
  for (double x : ss) total += x;
  char line[256];
  snprintf(line, sizeof line, "step=%ld ranks=%d grid=%dx%dx%d hash=%016llx sum=%.17g", step,
           g_nranks, b.nx, b.ny, b.nz * g_nranks, static_cast<unsigned long long>(all), total);
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_nranks);
  Options o = parse_options(argc, argv);
  const double t_start = MPI_Wtime();

  Block b;
  init_block(b, o);

  long step = 0;
  double read_s = 0.0;
  if (o.restart) {
    long found = -1;
    if (g_rank == 0) found = find_newest_complete_step(o);
    MPI_Bcast(&found, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (found < 0) {
      if (g_rank == 0)
        fprintf(
            stderr,
            "stencil3d: --restart: no complete checkpoint (ckpt_<step>_r<0..%d>.bin) in %s; run "
            "without --restart first\n",
            g_nranks - 1, o.ckpt_dir.c_str());
      MPI_Finalize();
      return 2;
    }
    const double t0 = MPI_Wtime();
    int ok = read_checkpoint(o, b, found) ? 1 : 0, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    double mine = MPI_Wtime() - t0;
    MPI_Reduce(&mine, &read_s, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (!all_ok) {
      if (g_rank == 0)
        fprintf(stderr, "stencil3d: restart from step %ld failed (see above)\n", found);
      MPI_Finalize();
      return 2;
    }
    step = found;
    if (g_rank == 0 && !o.quiet)
      printf("stencil3d: restarted from step %ld in %s\n", step, o.ckpt_dir.c_str());
  }

  if (o.ckpt_every > 0 && g_rank == 0) {
    std::error_code ec;
    std::filesystem::create_directories(o.ckpt_dir, ec);
    if (ec) die("cannot create checkpoint directory %s: %s", o.ckpt_dir, ec.message());
    if (!o.dump_dir.empty()) std::filesystem::create_directories(o.dump_dir, ec);
    if (ec) die("cannot create directory %s: %s", o.dump_dir, ec.message());
  }
  MPI_Barrier(MPI_COMM_WORLD);

  const long first = step;
  double write_s = 0.0;
  size_t bytes = 0;
  int written = 0;
  while (step < o.steps) {
    exchange_halos(b);
    step_block(b, step);
    ++step;
    if (o.ckpt_every > 0 && step % o.ckpt_every == 0) {
      const double t0 = MPI_Wtime();
      bytes += write_checkpoint(o, b, step);
      write_s += MPI_Wtime() - t0;
      ++written;
    }
  }

  const std::string digest = global_digest(b, step);
  double max_write_s = 0.0;
  unsigned long long total_bytes = 0, mine_bytes = bytes;
  MPI_Reduce(&write_s, &max_write_s, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&mine_bytes, &total_bytes, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (g_rank == 0) {
    if (!o.quiet) {
      printf("stencil3d: digest %s\n", digest.c_str());
      // key=value so scripts (tools/bench) can pick the numbers out.
      printf(
          "stencil3d: steps=%ld..%ld checkpoints=%d ckpt_files=%d ckpt_bytes=%llu "
          "ckpt_write_s=%.6f "
          "restart_read_s=%.6f run_s=%.6f\n",
          first, step, written, written * g_nranks, total_bytes, max_write_s, read_s,
          MPI_Wtime() - t_start);
    }
    if (!o.out.empty()) {
      FILE* f = fopen(o.out.c_str(), "w");
      if (!f || fprintf(f, "%s\n", digest.c_str()) < 0 || fclose(f) != 0)
        die("cannot write digest file %s: %s", o.out, strerror(errno));
    }
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
