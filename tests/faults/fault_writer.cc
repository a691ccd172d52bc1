// fault_writer: one checkpoint file written in steps a fault-injection test can stop
// between, reporting what every call returned. Plain C++, no MPI, no library of ours: the
// same command run without LD_PRELOAD is the oracle for the bytes.
//
//   fault_writer FILE SIZE [options]       SIZE and byte counts take a K or M suffix
//     --open trunc|append|rdwr|shared   how FILE is opened (default trunc:
//                                O_CREAT|O_TRUNC); append: O_APPEND; rdwr: O_RDWR, writing
//                                from its end; shared: O_CREAT without O_TRUNC (several
//                                writers of one file, each its own range: --from)
//     --from BYTES               write bytes [BYTES, SIZE) only (the same bytes a whole
//                                write puts there)
//     --seed N                   content seed (a reopen appends other bytes than the first
//                                write); the content of byte i is a hash of (seed, i)
//     --pause-at BYTES GATE      after BYTES bytes, print "paused at BYTES" and wait until
//                                the file GATE exists (a test kills the forwarder meanwhile)
//     --fsync-at BYTES           after BYTES bytes, fsync(FILE)
//     --fsync                    fsync(FILE) before the close (with --interleave: once this
//                                rank's blocks are written)
//     --mmap-read                with --interleave: before the close, map FILE (as long as
//                                it is then) and read one byte of every 64 KiB through the
//                                mapping (other ranks' blocks: holes where not written yet)
//     --hold-exit GATE           after the close, print "closed" and wait for GATE before
//                                exiting (the exit wait then runs after the test's fault)
//     --files N                  write FILE.0 .. FILE.N-1 instead (same options each)
//     --between MS               with --files: sleep MS milliseconds after each file (the
//                                steps of a run whose forwarder a test kills meanwhile)
//     --interleave BLOCK         N-1: this process is rank r of n (PMI_RANK, PMI_SIZE:
//                                under mpiexec.mpich) and writes, with pwrite into FILE
//                                opened O_CREAT without O_TRUNC, the blocks k of BLOCK
//                                bytes with k % n == r; all ranks together write SIZE
//                                bytes, the same bytes as one plain write of SIZE
//     --opened-gate GATE         with --interleave: after the open, print "opened" and
//                                wait for GATE (every writer opens before any closes)
//
// Prints one line per call that failed ("fsync: EIO ..."), and "done" at the end. Exit 0
// when every call succeeded, 3 when a call returned an error (what the application saw),
// 2 on a usage error.
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

long long parse_size(const char* s) {
  char* end = nullptr;
  long long v = strtoll(s, &end, 10);
  if (end == s || v < 0) return -1;
  if (*end == 'K' || *end == 'k')
    v <<= 10, ++end;
  else if (*end == 'M' || *end == 'm')
    v <<= 20, ++end;
  return *end ? -1 : v;
}

// Byte i of the content with this seed: cheap, not compressible to nothing, position
// dependent so a shifted or truncated copy differs.
void fill(std::vector<unsigned char>& buf, long long off, unsigned seed) {
  for (size_t i = 0; i < buf.size(); ++i) {
    uint64_t x =
        static_cast<uint64_t>(off + static_cast<long long>(i)) * 0x9E3779B97F4A7C15ull + seed;
    x ^= x >> 29;
    buf[i] = static_cast<unsigned char>((x >> 7) &
                                        (((off + static_cast<long long>(i)) & 64) ? 0xff : 0x0f));
  }
}

void wait_gate(const char* gate) {
  for (int i = 0; i < 12000 && access(gate, F_OK) != 0; ++i) usleep(10000);  // <= 120 s
}

struct Opts {
  const char* open = "trunc";
  long long from = 0;
  unsigned seed = 1;
  long long pause_at = -1;
  const char* pause_gate = nullptr;
  long long fsync_at = -1;
  bool fsync_before_close = false;
  bool mmap_read = false;
  const char* exit_gate = nullptr;
  int files = 0;
  int between_ms = 0;
  long long interleave = 0;
  const char* opened_gate = nullptr;
};

void report(const char* call, const std::string& file);

int env_int(const char* name, int dflt) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : dflt;
}

void write_interleaved(const std::string& file, long long size, const Opts& o) {
  int rank = env_int("PMI_RANK", 0), n = env_int("PMI_SIZE", 1);
  int fd = open(file.c_str(), (o.mmap_read ? O_RDWR : O_WRONLY) | O_CREAT, 0644);
  if (fd < 0) return report("open", file);
  if (o.opened_gate) {
    printf("opened\n");
    fflush(stdout);
    wait_gate(o.opened_gate);
  }
  std::vector<unsigned char> buf;
  for (long long k = rank, off; (off = k * o.interleave) < size; k += n) {
    buf.resize(static_cast<size_t>(std::min(o.interleave, size - off)));
    fill(buf, off, o.seed);
    if (pwrite(fd, buf.data(), buf.size(), off) != static_cast<ssize_t>(buf.size())) {
      report("pwrite", file);
      break;
    }
  }
  struct stat st {};
  if (o.mmap_read && fstat(fd, &st) == 0 && st.st_size > 0) {
    // The file as long as it is now (the other ranks may not have written its end yet).
    const size_t len = static_cast<size_t>(st.st_size);
    void* m = mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      report("mmap", file);
    } else {
      const volatile unsigned char* bytes = static_cast<const unsigned char*>(m);
      unsigned sum = 0;
      for (size_t off = 0; off < len; off += 64 << 10) sum += bytes[off];
      printf("mapped %zu bytes, sum %u\n", len, sum);
      munmap(m, len);
    }
  }
  if (o.fsync_before_close && fsync(fd) != 0) report("fsync", file);
  if (close(fd) != 0) report("close", file);
}

int failures = 0;
void report(const char* call, const std::string& file) {
  printf("%s %s: %s\n", call, file.c_str(), strerror(errno));
  fflush(stdout);
  ++failures;
}

void write_one(const std::string& file, long long size, const Opts& o) {
  if (o.interleave > 0) return write_interleaved(file, size, o);
  int flags = O_WRONLY | O_CREAT | O_TRUNC;
  if (!strcmp(o.open, "append")) flags = O_WRONLY | O_APPEND;
  if (!strcmp(o.open, "rdwr")) flags = O_RDWR;
  if (!strcmp(o.open, "shared")) flags = O_WRONLY | O_CREAT;
  int fd = open(file.c_str(), flags, 0644);
  if (fd < 0) return report("open", file);
  if (!strcmp(o.open, "rdwr") && lseek(fd, 0, SEEK_END) < 0) report("lseek", file);
  if (o.from > 0 && lseek(fd, o.from, SEEK_SET) != o.from) report("lseek", file);
  std::vector<unsigned char> buf;
  long long done = o.from;
  while (done < size) {
    long long step = std::min<long long>(size - done, 1 << 20);
    if (o.pause_at > done && o.pause_at < done + step) step = o.pause_at - done;
    if (o.fsync_at > done && o.fsync_at < done + step) step = o.fsync_at - done;
    buf.resize(static_cast<size_t>(step));
    fill(buf, done, o.seed);
    ssize_t n = write(fd, buf.data(), buf.size());
    if (n != step) {
      report("write", file);
      break;
    }
    done += step;
    if (done == o.pause_at && o.pause_gate) {
      printf("paused at %lld\n", done);
      fflush(stdout);
      wait_gate(o.pause_gate);
    }
    if (done == o.fsync_at && fsync(fd) != 0) report("fsync", file);
  }
  if (o.fsync_before_close && fsync(fd) != 0) report("fsync", file);
  if (close(fd) != 0) report("close", file);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(
        stderr,
        "usage: fault_writer FILE SIZE [--open trunc|append|rdwr|shared] [--from BYTES] [--seed N] "
        "[--pause-at BYTES GATE] [--fsync-at BYTES] [--fsync] [--mmap-read] [--hold-exit GATE] "
        "[--files N] "
        "[--between MS] [--interleave BLOCK]\n");
    return 2;
  }
  std::string file = argv[1];
  long long size = parse_size(argv[2]);
  Opts o;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    bool more = i + 1 < argc;
    if (a == "--open" && more)
      o.open = argv[++i];
    else if (a == "--from" && more)
      o.from = parse_size(argv[++i]);
    else if (a == "--seed" && more)
      o.seed = static_cast<unsigned>(atoi(argv[++i]));
    else if (a == "--pause-at" && i + 2 < argc)
      o.pause_at = parse_size(argv[++i]), o.pause_gate = argv[++i];
    else if (a == "--fsync")
      o.fsync_before_close = true;
    else if (a == "--mmap-read")
      o.mmap_read = true;
    else if (a == "--fsync-at" && more)
      o.fsync_at = parse_size(argv[++i]);
    else if (a == "--hold-exit" && more)
      o.exit_gate = argv[++i];
    else if (a == "--files" && more)
      o.files = atoi(argv[++i]);
    else if (a == "--between" && more)
      o.between_ms = atoi(argv[++i]);
    else if (a == "--interleave" && more)
      o.interleave = parse_size(argv[++i]);
    else if (a == "--opened-gate" && more)
      o.opened_gate = argv[++i];
    else {
      fprintf(stderr, "fault_writer: bad argument %s\n", a.c_str());
      return 2;
    }
  }
  if (size < 0) return 2;
  if (o.files <= 0) {
    write_one(file, size, o);
  } else {
    for (int k = 0; k < o.files; ++k) {
      write_one(file + "." + std::to_string(k), size, o);
      if (o.between_ms > 0) usleep(static_cast<useconds_t>(o.between_ms) * 1000);
    }
  }
  if (o.exit_gate) {
    printf("closed\n");
    fflush(stdout);
    wait_gate(o.exit_gate);
  }
  printf("done\n");
  return failures ? 3 : 0;
}
