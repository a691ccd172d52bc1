// ckpt_writer: a checkpoint writer and reader for the integration tests. Plain C++, no MPI:
// under mpiexec it takes its rank from the launcher's environment, so the same binary is
// also "a program linked with no MPI".
//
//   ckpt_writer write DIR [--rank N] [--no-fsync] [--hold FILE]
//                                           every write pattern, one file each (8 per rank);
//                                           --hold: after closing them, wait until FILE
//                                           exists before exiting
//   ckpt_writer read DIR [--rank N|--ranks N]  digest lines of this rank's (or ranks 0..N-1) files
//   ckpt_writer list DIR                    sorted directory listing via opendir/readdir
//   ckpt_writer big FILE SIZE [--rank N]    one file of SIZE bytes (suffix K or M allowed)
//                                           in 64 KiB write() calls
//   ckpt_writer bigstdio FILE SIZE [--rank N] [--chunk BYTES] [--small FILE2]
//                                           the same bytes as `big`, written with
//                                           fopen/fwrite (64 KiB fwrite() calls, or
//                                           BYTES each); FILE2: a 100 KiB file (as `big
//                                           FILE2 100K --rank N+1`) written with fwrite
//                                           first and closed last
//   ckpt_writer die FILE SIZE [--closed-first FILE2]
//                                           write SIZE bytes (as `big`) into FILE, then
//                                           SIGKILL itself with FILE still open (FILE2:
//                                           first write and close a 200 KiB file)
//   ckpt_writer threads DIR N               N threads each write two files at once
//   ckpt_writer fsync-check FILE STORE      write FILE, fsync, then check that STORE's
//                                           MANIFEST already names FILE and a *.ckc exists
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "checked_io.h"
#include "content.h"
#include "read_back.h"
#include "threads.h"
#include "write_patterns.h"

namespace ckpt_writer {
namespace {

int usage() {
  std::fprintf(
      stderr,
      "usage: ckpt_writer write DIR [--rank N] [--no-fsync] [--hold FILE]\n"
      "       ckpt_writer read DIR [--rank N | --ranks N]\n"
      "       ckpt_writer list DIR\n"
      "       ckpt_writer big FILE SIZE[K|M] [--rank N]\n"
      "       ckpt_writer bigstdio FILE SIZE[K|M] [--rank N] [--chunk BYTES] [--small FILE2]\n"
      "       ckpt_writer die FILE SIZE[K|M] [--closed-first FILE2]\n"
      "       ckpt_writer threads DIR N\n"
      "       ckpt_writer fsync-check FILE STORE\n");
  return 2;
}

int rank_from_env() {
  for (const char* v : {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"})
    if (const char* s = std::getenv(v)) return std::atoi(s);
  return 0;
}

// Value of "--flag N" anywhere in argv, or fallback.
int flag_value(int argc, char** argv, const char* flag, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], flag) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}

bool has_flag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], flag) == 0) return true;
  return false;
}

const char* flag_string(int argc, char** argv, const char* flag) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], flag) == 0) return argv[i + 1];
  return nullptr;
}

int cmd_read(const std::string& dir, int argc, char** argv) {
  int ranks = flag_value(argc, argv, "--ranks", 0);
  int first = ranks > 0 ? 0 : flag_value(argc, argv, "--rank", rank_from_env());
  int last = ranks > 0 ? ranks - 1 : first;
  bool ok = true;
  for (int r = first; r <= last; ++r)
    for (const auto& name : file_names(r)) ok = digest_file(dir, name) && ok;
  return ok ? 0 : 1;
}

// The fsync contract: when fsync() returns on a captured file, that version is committed,
// so the store's manifest already names the file. Checked from inside the process, before
// close and exit, so neither exit-wait nor a drain can be what made it true.
int cmd_fsync_check(const std::string& file, const std::string& store) {
  auto data = make_bytes(seed_for(0, 10), 200000);
  int fd = xopen(file, O_WRONLY | O_CREAT | O_TRUNC);
  xwrite_all(fd, data.data(), data.size(), file);
  if (::fsync(fd) != 0) die("fsync", file);
  int containers = 0;
  if (DIR* d = ::opendir(store.c_str())) {
    while (struct dirent* e = ::readdir(d)) {
      size_t n = std::strlen(e->d_name);
      if (n > 4 && std::strcmp(e->d_name + n - 4, ".ckc") == 0) ++containers;
    }
    ::closedir(d);
  }
  std::string manifest;
  if (FILE* f = std::fopen((store + "/MANIFEST").c_str(), "rb")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) manifest.append(buf, n);
    std::fclose(f);
  }
  bool named = manifest.find(file) != std::string::npos;
  std::printf("fsync-check: containers=%d manifest_names_file=%s\n", containers,
              named ? "yes" : "no");
  xclose(fd, file);
  return containers > 0 && named ? 0 : 3;
}

}  // namespace
}  // namespace ckpt_writer

int main(int argc, char** argv) {
  using namespace ckpt_writer;
  if (argc < 3) return usage();
  const std::string cmd = argv[1];
  const std::string arg = argv[2];
  if (cmd == "write") {
    int rank = flag_value(argc, argv, "--rank", rank_from_env());
    write_all(arg, rank, !has_flag(argc, argv, "--no-fsync"));
    // Tests that act between "all files closed" and "process exit" wait for this line.
    std::printf("ckpt_writer: rank %d wrote %zu files\n", rank, file_names(rank).size());
    std::fflush(stdout);
    if (const char* hold = flag_string(argc, argv, "--hold")) {
      for (int i = 0; i < 6000 && ::access(hold, F_OK) != 0; ++i) ::usleep(20000);  // <= 120 s
    }
    return 0;
  }
  if (cmd == "read") return cmd_read(arg, argc, argv);
  if (cmd == "list") return list_dir(arg) ? 0 : 1;
  if ((cmd == "big" || cmd == "bigstdio" || cmd == "die") && argc >= 4) {
    char* end = nullptr;
    unsigned long long size = std::strtoull(argv[3], &end, 10);
    if (*end == 'K')
      size <<= 10;
    else if (*end == 'M')
      size <<= 20;
    else if (*end != '\0')
      return usage();
    const int rank = flag_value(argc, argv, "--rank", rank_from_env());
    if (cmd == "big") {
      write_big(arg, rank, static_cast<size_t>(size));
      return 0;
    }
    if (cmd == "bigstdio") {
      // Both streams open at once: only the one that outgrows staging may switch.
      const char* small = flag_string(argc, argv, "--small");
      FILE* s = small ? write_big_stdio_open(small, rank + 1, 100 << 10) : nullptr;
      const int chunk = flag_value(argc, argv, "--chunk", 0);
      write_big_stdio(arg, rank, static_cast<size_t>(size),
                      chunk > 0 ? static_cast<size_t>(chunk) : 0);
      if (s && std::fclose(s) != 0) die("fclose", small);
      return 0;
    }
    // A rank killed mid-write: the bytes are written, the file is never closed.
    if (const char* first = flag_string(argc, argv, "--closed-first"))
      write_big(first, rank + 1, 200 << 10);
    int fd = write_big_open(arg, rank, static_cast<size_t>(size));
    (void)fd;
    ::kill(::getpid(), SIGKILL);
    return 1;
  }
  if (cmd == "threads" && argc >= 4) {
    write_threaded(arg, std::atoi(argv[3]));
    return 0;
  }
  if (cmd == "fsync-check" && argc >= 4) return cmd_fsync_check(arg, argv[3]);
  return usage();
}
