// bench_calls: what each call of a small file costs, one call at a time: open, write and
// close of N files of S bytes timed apart (run it directly and under
// LD_PRELOAD=libckptfwd.so to compare), and the round trip of a local socket between two
// processes, the unit the library's requests to the forwarder are counted in
// (tools/bench/bench_patterns.sh prints both).
//
//   bench_calls files --dir DIR [--files N] [--size S]
//       prints "open_us=.. write_us=.. close_us=.. file_us=.." (medians over the files;
//       file_us: the three together), then reads every file back and checks it
//   bench_calls socket [--trips N]
//       prints "rtt_us=.." (median of N round trips of a 64-byte message over a Unix
//       socket pair between a parent and a child, both blocking in read)
//   bench_calls start [--reps N] [--preload LIB] [--fresh-job PREFIX]
//       prints "start_us=.." (median of N runs of /bin/true, from posix_spawn to its exit:
//       what loading the library costs a process). --preload: LD_PRELOAD=LIB in the child
//       only; --fresh-job: CKPTFWD_JOB_ID=PREFIX-<i> per run, so that no forwarder
//       listens and the library's early start runs (runs 300 ms apart: the last run's
//       forwarder has started by then and does not compete for the cores)
#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

double now_us() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + ts.tv_nsec / 1e3;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

[[noreturn]] void die(const char* what, const std::string& path) {
  fprintf(stderr, "bench_calls: %s %s: %s\n", what, path.c_str(), strerror(errno));
  exit(1);
}

// The bytes of file i: its index, repeated.
void fill(std::vector<char>& buf, size_t i) {
  char tag[24];
  int n = snprintf(tag, sizeof(tag), "%08zu", i);
  for (size_t k = 0; k < buf.size(); ++k) buf[k] = tag[k % static_cast<size_t>(n)];
}

int files(const std::string& dir, size_t n, size_t size) {
  std::vector<double> opens, writes, closes, whole;
  std::vector<char> buf(size), back(size + 1);
  for (size_t i = 0; i < n; ++i) {
    const std::string path = dir + "/c" + std::to_string(i) + ".bin";
    fill(buf, i);
    double t0 = now_us();
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    double t1 = now_us();
    if (fd < 0) die("cannot create", path);
    if (write(fd, buf.data(), size) != static_cast<ssize_t>(size)) die("cannot write", path);
    double t2 = now_us();
    if (close(fd) != 0) die("cannot close", path);
    double t3 = now_us();
    opens.push_back(t1 - t0);
    writes.push_back(t2 - t1);
    closes.push_back(t3 - t2);
    whole.push_back(t3 - t0);
  }
  for (size_t i = 0; i < n; ++i) {
    const std::string path = dir + "/c" + std::to_string(i) + ".bin";
    fill(buf, i);
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) die("cannot open", path);
    ssize_t got = read(fd, back.data(), back.size());
    close(fd);
    if (got != static_cast<ssize_t>(size) || memcmp(back.data(), buf.data(), size) != 0) {
      fprintf(stderr, "bench_calls: %s: wrong bytes read back\n", path.c_str());
      return 1;
    }
  }
  printf("open_us=%.1f write_us=%.1f close_us=%.1f file_us=%.1f files=%zu\n", median(opens),
         median(writes), median(closes), median(whole), n);
  return 0;
}

int socket_trips(size_t trips) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) die("socketpair", "");
  char msg[64] = {};
  pid_t child = fork();
  if (child < 0) die("fork", "");
  if (child == 0) {  // echoes every message back
    close(sv[0]);
    for (;;) {
      ssize_t r = read(sv[1], msg, sizeof(msg));
      if (r <= 0 || write(sv[1], msg, static_cast<size_t>(r)) != r) _exit(0);
    }
  }
  close(sv[1]);
  std::vector<double> rtt;
  for (size_t i = 0; i < trips; ++i) {
    double t0 = now_us();
    if (write(sv[0], msg, sizeof(msg)) != static_cast<ssize_t>(sizeof(msg))) die("write", "");
    size_t got = 0;
    while (got < sizeof(msg)) {
      ssize_t r = read(sv[0], msg + got, sizeof(msg) - got);
      if (r <= 0) die("read", "");
      got += static_cast<size_t>(r);
    }
    rtt.push_back(now_us() - t0);
  }
  close(sv[0]);
  waitpid(child, nullptr, 0);
  printf("rtt_us=%.1f trips=%zu\n", median(rtt), trips);
  return 0;
}

int starts(size_t reps, const std::string& preload, const std::string& fresh) {
  if (!preload.empty()) setenv("LD_PRELOAD", preload.c_str(), 1);
  std::vector<double> t;
  for (size_t i = 0; i < reps; ++i) {
    if (!fresh.empty()) {
      setenv("CKPTFWD_JOB_ID", (fresh + "-" + std::to_string(i)).c_str(), 1);
      usleep(300000);
    }
    char prog[] = "/bin/true";
    char* args[] = {prog, nullptr};
    double t0 = now_us();
    pid_t pid = -1;
    if (posix_spawn(&pid, prog, nullptr, nullptr, args, environ) != 0) die("posix_spawn", prog);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    t.push_back(now_us() - t0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("a run failed:", prog);
  }
  unsetenv("LD_PRELOAD");
  printf("start_us=%.1f reps=%zu\n", median(t), reps);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    fprintf(argc < 2 ? stderr : stdout,
            "usage: bench_calls files --dir DIR [--files N] [--size S]\n"
            "       bench_calls socket [--trips N]\n"
            "       bench_calls start [--reps N] [--preload LIB] [--fresh-job PREFIX]\n"
            "  files   open, write and close N files of S bytes (2000, 4096), each call\n"
            "          timed; prints the medians in us (open_us write_us close_us file_us)\n"
            "          and checks every file read back\n"
            "  socket  N round trips (10000) of 64 bytes over a Unix socket pair between\n"
            "          two processes; prints the median (rtt_us)\n"
            "  start   N runs (20) of /bin/true from spawn to exit, median (start_us);\n"
            "          --preload LIB: under LD_PRELOAD=LIB; --fresh-job PREFIX: each run a\n"
            "          new CKPTFWD_JOB_ID (no forwarder listens: the early start runs)\n");
    return argc < 2 ? 2 : 0;
  }
  const std::string mode = argv[1];
  std::string dir, preload, fresh;
  size_t n = mode == "socket" ? 10000 : mode == "start" ? 20 : 2000, size = 4096;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--dir") {
      dir = argv[i + 1];
    } else if (a == "--preload" || a == "--fresh-job") {
      (a == "--preload" ? preload : fresh) = argv[i + 1];
    } else if (a == "--files" || a == "--trips" || a == "--size" || a == "--reps") {
      (a == "--size" ? size : n) = strtoull(argv[i + 1], nullptr, 10);
    } else {
      fprintf(stderr, "bench_calls: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (mode == "socket") return socket_trips(n ? n : 1);
  if (mode == "start") return starts(n ? n : 1, preload, fresh);
  if (mode == "files" && !dir.empty() && n && size) return files(dir, n, size);
  fprintf(stderr, "bench_calls: bad arguments (--help)\n");
  return 2;
}
