#include "read_back.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

#include "checked_io.h"
#include "digest.h"

namespace ckpt_writer {
namespace {

bool fail(const char* op, const std::string& path) {
  std::fprintf(stderr, "ckpt_writer: %s %s: %s\n", op, path.c_str(), std::strerror(errno));
  return false;
}

bool by_read(const std::string& path, Digest& d) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return fail("open(O_RDONLY)", path);
  std::vector<char> buf(65536);
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return fail("read", path);
    }
    if (n == 0) break;
    d.update(buf.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

// pread in an odd chunk size, so chunk edges never line up with the writer's.
bool by_pread(const std::string& path, Digest& d) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return fail("open(O_RDONLY)", path);
  std::vector<char> buf(7777);
  off_t off = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf.data(), buf.size(), off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return fail("pread", path);
    }
    if (n == 0) break;
    d.update(buf.data(), static_cast<size_t>(n));
    off += n;
  }
  ::close(fd);
  return true;
}

bool by_fread(const std::string& path, Digest& d) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return fail("fopen(rb)", path);
  std::vector<char> buf(10000);
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) d.update(buf.data(), n);
  bool ok = !std::ferror(f);
  std::fclose(f);
  return ok ? true : fail("fread", path);
}

bool by_mmap(const std::string& path, Digest& d) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return fail("open(O_RDONLY)", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return fail("fstat", path);
  }
  if (st.st_size > 0) {
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      return fail("mmap", path);
    }
    d.update(p, static_cast<size_t>(st.st_size));
    ::munmap(p, static_cast<size_t>(st.st_size));
  }
  ::close(fd);
  return true;
}

}  // namespace

bool digest_file(const std::string& dir, const std::string& name) {
  const std::string path = join(dir, name);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return fail("stat", path);
  if (!S_ISREG(st.st_mode)) {
    std::fprintf(stderr, "ckpt_writer: stat %s: not a regular file (mode %o)\n", path.c_str(),
                 static_cast<unsigned>(st.st_mode));
    return false;
  }
  Digest ways[4];
  const char* names[4] = {"read", "pread", "fread", "mmap"};
  if (!by_read(path, ways[0]) || !by_pread(path, ways[1]) || !by_fread(path, ways[2]) ||
      !by_mmap(path, ways[3]))
    return false;
  bool ok = true;
  for (int i = 0; i < 4; ++i) {
    if (ways[i].value() != ways[0].value() || ways[i].size() != static_cast<uint64_t>(st.st_size)) {
      std::fprintf(stderr,
                   "ckpt_writer: %s: %s saw %" PRIu64 " bytes digest %016" PRIx64
                   ", read saw %" PRIu64 " bytes digest %016" PRIx64 ", stat size %lld\n",
                   path.c_str(), names[i], ways[i].size(), ways[i].value(), ways[0].size(),
                   ways[0].value(), static_cast<long long>(st.st_size));
      ok = false;
    }
  }
  std::printf("%s %" PRIu64 " %016" PRIx64 "\n", name.c_str(), ways[0].size(), ways[0].value());
  return ok;
}

bool list_dir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return fail("opendir", dir);
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent* e = ::readdir(d)) {
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
    errno = 0;
  }
  bool ok = errno == 0;
  ::closedir(d);
  if (!ok) return fail("readdir", dir);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) std::printf("%s\n", n.c_str());
  return true;
}

}  // namespace ckpt_writer
