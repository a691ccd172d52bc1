#include "forwarder/staging/staging.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/pause_point.h"
#include "store/container/content_hash.h"

namespace ckptfwd::fwd {

std::string errno_message(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + strerror(errno);
}

namespace {

// One page: a write of it at offset 0 is done whole or not at all by a killed process.
constexpr size_t kMetaPage = 4096;

bool write_fresh(const std::string& meta_path, const std::string& text, bool* exists) {
  int fd = open(meta_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  *exists = fd < 0 && errno == EEXIST;
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

bool write_in_place(const std::string& meta_path, std::string text) {
  int fd = open(meta_path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            static_cast<uint64_t>(st.st_size) <= kMetaPage && text.size() <= kMetaPage;
  if (ok && text.size() < static_cast<size_t>(st.st_size))
    text.append(static_cast<size_t>(st.st_size) - text.size(), '\n');
  ok = ok && pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}
}  // namespace

bool write_meta(const std::string& meta_path, const VersionMeta& m, std::string* err,
                MetaWrite how) {
  std::string text = format_meta(m);
  if (how == MetaWrite::kFresh) {
    bool exists = false;
    if (write_fresh(meta_path, text, &exists)) return true;
    if (!exists) {
      if (err) *err = errno_message("cannot write", meta_path);
      unlink(meta_path.c_str());
      return false;
    }
  } else if (how == MetaWrite::kInPlace && write_in_place(meta_path, text)) {
    return true;
  }
  std::string tmp = meta_path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    if (err) *err = errno_message("cannot create", tmp);
    return false;
  }
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (!ok && err) *err = errno_message("cannot write", tmp);
  close(fd);
  if (ok && rename(tmp.c_str(), meta_path.c_str()) != 0) {
    if (err) *err = errno_message("cannot rename to", meta_path);
    ok = false;
  }
  if (!ok) unlink(tmp.c_str());
  return ok;
}

bool read_meta(const std::string& meta_path, VersionMeta& m, std::string* err) {
  if (!read_meta_file(meta_path, m, err)) return false;
  if (!m.path.empty() && m.path[0] == '/') return true;
  if (err) *err = meta_path + ": no absolute path= line";
  return false;
}

namespace {
// The process umask, once the forwarder read it (note_umask): -1 until then.
std::atomic<int> g_umask{-1};
}  // namespace

void note_umask() {
  mode_t m = umask(077);
  umask(m);
  g_umask.store(static_cast<int>(m));
}

int create_staged(const std::string& path, std::string* err, unsigned mode) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0 && err) *err = errno_message("cannot create staged file", path);
  // Exactly mode, whatever the umask: an fchmod only where it took some of it.
  int mask = g_umask.load(std::memory_order_relaxed);
  if (fd >= 0 && (mask < 0 || (static_cast<unsigned>(mask) & mode) != 0)) fchmod(fd, mode);
  return fd;
}

bool copy_staged_file(int src, const std::string& dst_path, std::string* err) {
  int fd = create_staged(dst_path, err);
  bool ok = fd >= 0 && copy_fd(src, fd, err);
  struct stat st;
  if (ok && fstat(src, &st) == 0) {  // the copy shows the file's own mtime
    struct timespec ts[2] = {st.st_atim, st.st_mtim};
    futimens(fd, ts);
  }
  if (fd >= 0) close(fd);
  return ok;
}

bool copy_fd(int src, int dst, std::string* err) {
  struct stat st;
  if (fstat(src, &st) != 0) {
    if (err) *err = std::string("fstat: ") + strerror(errno);
    return false;
  }
  off_t size = st.st_size;
  off_t pos = 0;
  std::vector<char> buf;
  while (pos < size) {
    // Skip holes so a sparse checkpoint stays sparse in staging.
    off_t data = lseek(src, pos, SEEK_DATA);
    if (data < 0) break;  // ENXIO: only a hole remains
    off_t hole = lseek(src, data, SEEK_HOLE);
    if (hole < 0 || hole > size) hole = size;
    off_t in = data, out = data;
    while (in < hole) {
      ssize_t n = copy_file_range(src, &in, dst, &out, static_cast<size_t>(hole - in), 0);
      if (n > 0) continue;
      if (n == 0) break;
      if (errno == EINTR) continue;
      // Fallback for filesystems without copy_file_range.
      if (buf.empty()) buf.resize(1 << 20);
      ssize_t r = pread(src, buf.data(), std::min<off_t>(hole - in, buf.size()), in);
      if (r <= 0) {
        if (err) *err = std::string("read: ") + strerror(r < 0 ? errno : EIO);
        return false;
      }
      if (pwrite(dst, buf.data(), static_cast<size_t>(r), out) != r) {
        if (err) *err = std::string("write: ") + strerror(errno);
        return false;
      }
      in += r;
      out += r;
    }
    pos = hole;
  }
  if (ftruncate(dst, size) != 0) {
    if (err) *err = std::string("ftruncate: ") + strerror(errno);
    return false;
  }
  return true;
}

bool hash_staged(const std::string& path, uint64_t size, uint64_t* hash) {
  Extents whole;
  if (size) whole.push_back({0, size});
  return hash_staged_ranges(path, whole, hash, nullptr);
}

bool hash_staged_ranges(const std::string& path, const Extents& ranges, uint64_t* hash,
                        std::string* err) {
  constexpr uint64_t kWindow = 4ull << 20;
  thread_local std::vector<uint8_t> buf;
  *hash = content_hash(nullptr, 0);
  if (ranges.empty()) return true;
  buf.resize(kWindow);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (err) *err = errno_message("cannot open staged file", path);
    return false;
  }
  ContentHashStream h;
  if (!h.ok()) {
    ::close(fd);
    if (err) *err = "out of memory hashing " + path;
    return false;
  }
  for (const Extent& x : ranges)
    for (uint64_t a = x.begin; a < x.end;) {
      ssize_t r = ::pread(fd, buf.data(), std::min(kWindow, x.end - a), static_cast<off_t>(a));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        if (err)
          *err = "reading staged file " + path + ": " +
                 (r < 0 ? strerror(errno) : "the file is shorter than when it was mapped");
        ::close(fd);
        return false;
      }
      h.update(buf.data(), static_cast<size_t>(r));
      a += static_cast<uint64_t>(r);
      pause_point();  // (base/pause_point.h: a bulk task waits here while the node writes)
    }
  ::close(fd);
  *hash = h.digest();
  return true;
}

void remove_staged(const std::string& data_path, const std::string& meta_path) {
  if (!data_path.empty()) unlink(data_path.c_str());
  if (!meta_path.empty()) unlink(meta_path.c_str());
}

}  // namespace ckptfwd::fwd
