#include "write_patterns.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "checked_io.h"
#include "content.h"

namespace ckpt_writer {
namespace {

struct Pattern {
  const char* stem;
  const char* ext;
  void (*write)(const std::string& dir, const std::string& name, int rank);
};

bool g_fsync_before_rename = true;

std::string name_of(const char* stem, const char* ext, int rank) {
  return std::string(stem) + "_r" + std::to_string(rank) + "." + ext;
}

// Plain write() in uneven pieces; the tail goes through a dup()'d descriptor that is closed
// before the original, so the version must stay open until the last descriptor closes.
void write_posix(const std::string& dir, const std::string& name, int rank) {
  const std::string path = join(dir, name);
  auto field = make_field(seed_for(rank, 1), 40000);
  auto header = make_header(rank, 1, static_cast<int64_t>(field.size()));
  int fd = xopen(path, O_WRONLY | O_CREAT | O_TRUNC);
  xwrite_all(fd, header.data(), header.size(), path);
  const char* bytes = reinterpret_cast<const char*>(field.data());
  const size_t total = field.size() * sizeof(double);
  const size_t cuts[] = {0, 4093, 100000, 250001, total};
  for (int i = 0; i + 1 < 4; ++i) xwrite_all(fd, bytes + cuts[i], cuts[i + 1] - cuts[i], path);
  int fd2 = ::dup(fd);
  if (fd2 < 0) die("dup", path);
  xwrite_all(fd2, bytes + cuts[3], cuts[4] - cuts[3], path);
  xclose(fd2, path);
  xclose(fd, path);
}

// pwrite() of 4 KiB blocks at scattered offsets in a permuted order, leaving never-written
// gaps between them (they read back as zeros), then the header over the start.
void write_pwrite(const std::string& dir, const std::string& name, int rank) {
  const std::string path = join(dir, name);
  constexpr int kBlocks = 64;
  constexpr size_t kBlock = 4096;
  auto data = make_bytes(seed_for(rank, 2), kBlocks * kBlock);
  int fd = xopen(path, O_WRONLY | O_CREAT | O_TRUNC);
  for (int i = 0; i < kBlocks; ++i) {
    int b = (i * 37 + rank) % kBlocks;  // 37 is coprime with 64: every block exactly once
    xpwrite_all(fd, data.data() + static_cast<size_t>(b) * kBlock, kBlock,
                static_cast<off_t>(b) * 2 * kBlock + (b % 3) * 512, path);
  }
  auto header = make_header(rank, 2, kBlocks);
  xpwrite_all(fd, header.data(), header.size(), 0, path);
  xclose(fd, path);
}

// writev() of a header, a float64 field, an int array and text in one call, then a
// pwritev() that patches the middle of the field.
void write_writev(const std::string& dir, const std::string& name, int rank) {
  const std::string path = join(dir, name);
  auto field = make_field(seed_for(rank, 3), 20000);
  auto header = make_header(rank, 3, static_cast<int64_t>(field.size()));
  std::vector<int32_t> ids(5000);
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = static_cast<int32_t>(i * 7 + static_cast<size_t>(rank));
  std::string text = make_text(seed_for(rank, 33), 50);
  struct iovec iov[4] = {
      {header.data(), header.size()},
      {field.data(), field.size() * sizeof(double)},
      {ids.data(), ids.size() * sizeof(int32_t)},
      {text.data(), text.size()},
  };
  int fd = xopen(path, O_WRONLY | O_CREAT | O_TRUNC);
  xwritev_all(fd, iov, 4, path);
  auto patch = make_field(seed_for(rank, 34), 300);
  struct iovec piov[2] = {{patch.data(), 150 * sizeof(double)},
                          {patch.data() + 150, 150 * sizeof(double)}};
  ssize_t w = ::pwritev(fd, piov, 2, 32 + 5000 * sizeof(double));
  if (w != static_cast<ssize_t>(300 * sizeof(double))) die("pwritev", path);
  xclose(fd, path);
}

// stdio: fprintf, fwrite in pieces, fputc, an explicit fflush midway.
void write_stdio(const std::string& dir, const std::string& name, int rank) {
  const std::string path = join(dir, name);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) die("fopen", path);
  auto field = make_field(seed_for(rank, 4), 30000);
  std::fprintf(f, "# stdio checkpoint rank=%d n=%zu\n", rank, field.size());
  for (size_t off = 0; off < field.size(); off += 7000) {
    size_t n = field.size() - off < 7000 ? field.size() - off : 7000;
    if (std::fwrite(field.data() + off, sizeof(double), n, f) != n) die("fwrite", path);
    if (off == 14000 && std::fflush(f) != 0) die("fflush", path);
  }
  std::fputc('\n', f);
  if (std::fclose(f) != 0) die("fclose", path);
}

// std::ofstream: text with exact doubles plus a binary block through ostream::write.
void write_ofstream(const std::string& dir, const std::string& name, int rank) {
  const std::string path = join(dir, name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) die("std::ofstream open", path);
  out << "rank " << rank << "\n" << make_text(seed_for(rank, 5), 2000);
  auto blob = make_bytes(seed_for(rank, 55), 100000);
  out.write(reinterpret_cast<const char*>(blob.data()), static_cast<std::streamsize>(blob.size()));
  out.close();
  if (!out) die("std::ofstream write/close", path);
}

// O_APPEND across two separate open()s, then a third append through fopen("a").
void write_append(const std::string& dir, const std::string& name, int rank) {
  const std::string path = join(dir, name);
  std::string first = make_text(seed_for(rank, 6), 300);
  int fd = xopen(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND);
  xwrite_all(fd, first.data(), first.size(), path);
  xclose(fd, path);
  std::string second = make_text(seed_for(rank, 66), 200);
  fd = xopen(path, O_WRONLY | O_APPEND);
  xwrite_all(fd, second.data(), second.size(), path);
  xclose(fd, path);
  FILE* f = std::fopen(path.c_str(), "a");
  if (!f) die("fopen(a)", path);
  std::fprintf(f, "end of log rank %d\n", rank);
  if (std::fclose(f) != 0) die("fclose", path);
}

// ftruncate that grows the file past its end (a hole), data inside the hole and after it,
// then a shrinking ftruncate.
void write_holes(const std::string& dir, const std::string& name, int rank) {
  const std::string path = join(dir, name);
  auto data = make_bytes(seed_for(rank, 7), 20000);
  int fd = xopen(path, O_WRONLY | O_CREAT | O_TRUNC);
  xwrite_all(fd, data.data(), 10000, path);
  if (::ftruncate(fd, 300000) != 0) die("ftruncate(grow)", path);
  xpwrite_all(fd, data.data() + 10000, 5000, 150000, path);
  if (::lseek(fd, 0, SEEK_END) != 300000) die("lseek(SEEK_END) != 300000", path);
  xwrite_all(fd, data.data() + 15000, 5000, path);
  if (::ftruncate(fd, 301000 + rank) != 0) die("ftruncate(shrink)", path);
  xclose(fd, path);
}

// The checkpoint rotation idiom: write "x.tmp", fsync, rename over "x"; twice, so the
// second rename replaces an existing captured file.
void write_rename(const std::string& dir, const std::string& name, int rank) {
  const std::string path = join(dir, name);
  const std::string tmp = path + ".tmp";
  for (int gen = 1; gen <= 2; ++gen) {
    auto field = make_field(seed_for(rank, 8, gen), 25000);
    auto header = make_header(rank, gen, static_cast<int64_t>(field.size()));
    int fd = xopen(tmp, O_WRONLY | O_CREAT | O_TRUNC);
    xwrite_all(fd, header.data(), header.size(), tmp);
    xwrite_all(fd, field.data(), field.size() * sizeof(double), tmp);
    if (g_fsync_before_rename && ::fsync(fd) != 0) die("fsync", tmp);
    xclose(fd, tmp);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) die("rename to final name", tmp);
  }
}

const Pattern kPatterns[] = {
    {"posix", "bin", write_posix},       {"pwrite", "bin", write_pwrite},
    {"writev", "bin", write_writev},     {"stdio", "dat", write_stdio},
    {"ofstream", "txt", write_ofstream}, {"append", "log", write_append},
    {"holes", "bin", write_holes},       {"ckpt", "bin", write_rename},
};

}  // namespace

std::vector<std::string> file_names(int rank) {
  std::vector<std::string> names;
  for (const auto& p : kPatterns) names.push_back(name_of(p.stem, p.ext, rank));
  return names;
}

void write_all(const std::string& dir, int rank, bool fsync_before_rename) {
  g_fsync_before_rename = fsync_before_rename;
  for (const auto& p : kPatterns) p.write(dir, name_of(p.stem, p.ext, rank), rank);
}

void write_big(const std::string& path, int rank, size_t bytes) {
  xclose(write_big_open(path, rank, bytes), path);
}

int write_big_open(const std::string& path, int rank, size_t bytes) {
  auto block = make_bytes(seed_for(rank, 9), 64 * 1024);
  int fd = xopen(path, O_WRONLY | O_CREAT | O_TRUNC);
  for (size_t done = 0, i = 0; done < bytes; ++i) {
    block[i % block.size()] ^= static_cast<unsigned char>(i + 1);  // no two blocks alike
    size_t n = bytes - done < block.size() ? bytes - done : block.size();
    xwrite_all(fd, block.data(), n, path);
    done += n;
  }
  return fd;
}

FILE* write_big_stdio_open(const std::string& path, int rank, size_t bytes, size_t chunk) {
  auto block = make_bytes(seed_for(rank, 9), 64 * 1024);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) die("fopen", path);
  if (chunk == 0) chunk = block.size();
  for (size_t done = 0, i = 0; done < bytes; ++i) {
    block[i % block.size()] ^= static_cast<unsigned char>(i + 1);  // as write_big_open
    size_t n = bytes - done < block.size() ? bytes - done : block.size();
    // Chunks that do not divide the stream buffer leave bytes pending in it at any point.
    for (size_t off = 0; off < n; off += chunk) {
      size_t m = n - off < chunk ? n - off : chunk;
      if (std::fwrite(block.data() + off, 1, m, f) != m) die("fwrite", path);
    }
    done += n;
  }
  return f;
}

void write_big_stdio(const std::string& path, int rank, size_t bytes, size_t chunk) {
  if (std::fclose(write_big_stdio_open(path, rank, bytes, chunk)) != 0) die("fclose", path);
}

}  // namespace ckpt_writer
