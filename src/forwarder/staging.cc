#include "forwarder/staging.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "forwarder/warm_memory.h"
#include "forwarder/worker_pool.h"

namespace ckptfwd::fwd {

namespace {
std::string why(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + strerror(errno);
}

// Paths are percent-encoded in the meta file so a newline in a name cannot break it.
std::string enc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '%' || c == '\n' || c == '\r') {
      char b[4];
      snprintf(b, sizeof(b), "%%%02X", static_cast<unsigned char>(c));
      o += b;
    } else {
      o += c;
    }
  }
  return o;
}

std::string dec(const std::string& s) {
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      unsigned v = 0;
      if (sscanf(s.c_str() + i + 1, "%2x", &v) == 1) {
        o += static_cast<char>(v);
        i += 2;
        continue;
      }
    }
    o += s[i];
  }
  return o;
}
}  // namespace

namespace {
std::string meta_text(const VersionMeta& m) {
  char mode[16];
  snprintf(mode, sizeof(mode), "%o", m.mode);
  std::string text = "path=" + enc(m.path) + "\nrank=" + std::to_string(m.rank) + "\nmode=" + mode +
                     "\npid=" + std::to_string(m.pid) + "\n";
  if (m.partial) text += "partial=1\n";
  if (m.extents_unknown) text += "extents_unknown=1\n";
  if (m.created) text += "created=1\n";
  if (m.whole >= 0) text += "whole=" + std::to_string(m.whole) + "\n";
  text += m.closed ? "state=closed\ncloser=" + std::to_string(m.closer) + "\n" : "state=open\n";
  if (!m.closed && !m.holders.empty()) {
    text += "holders=";
    for (size_t i = 0; i < m.holders.size(); ++i)
      text += (i ? "," : "") + std::to_string(m.holders[i].first) + ":" +
              std::to_string(m.holders[i].second);
    text += "\n";
  }
  return text;
}

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
  std::string text = meta_text(m);
  if (how == MetaWrite::kFresh) {
    bool exists = false;
    if (write_fresh(meta_path, text, &exists)) return true;
    if (!exists) {
      if (err) *err = why("cannot write", meta_path);
      unlink(meta_path.c_str());
      return false;
    }
  } else if (how == MetaWrite::kInPlace && write_in_place(meta_path, text)) {
    return true;
  }
  std::string tmp = meta_path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    if (err) *err = why("cannot create", tmp);
    return false;
  }
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (!ok && err) *err = why("cannot write", tmp);
  close(fd);
  if (ok && rename(tmp.c_str(), meta_path.c_str()) != 0) {
    if (err) *err = why("cannot rename to", meta_path);
    ok = false;
  }
  if (!ok) unlink(tmp.c_str());
  return ok;
}

bool read_meta(const std::string& meta_path, VersionMeta& m, std::string* err) {
  int fd = open(meta_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (err) *err = why("cannot open", meta_path);
    return false;
  }
  char buf[8192];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) {
    if (err) *err = meta_path + ": empty or unreadable";
    return false;
  }
  buf[n] = '\0';
  bool have_path = false;
  char* save = nullptr;
  for (char* line = strtok_r(buf, "\n", &save); line; line = strtok_r(nullptr, "\n", &save)) {
    char* eq = strchr(line, '=');
    if (!eq) continue;
    *eq = '\0';
    const char* v = eq + 1;
    if (!strcmp(line, "path")) {
      m.path = dec(v);
      have_path = !m.path.empty() && m.path[0] == '/';
    } else if (!strcmp(line, "rank")) {
      m.rank = atoi(v);
    } else if (!strcmp(line, "mode")) {
      m.mode = static_cast<uint32_t>(strtoul(v, nullptr, 8)) & 07777;
    } else if (!strcmp(line, "pid")) {
      m.pid = atol(v);
    } else if (!strcmp(line, "partial")) {
      m.partial = !strcmp(v, "1");
    } else if (!strcmp(line, "extents_unknown")) {
      m.extents_unknown = !strcmp(v, "1");
    } else if (!strcmp(line, "created")) {
      m.created = !strcmp(v, "1");
    } else if (!strcmp(line, "whole")) {
      m.whole = parse_whole_end(v);  // a bad one: unknown, as without the line
    } else if (!strcmp(line, "state")) {
      m.closed = !strcmp(v, "closed");
    } else if (!strcmp(line, "closer")) {
      m.closer = atol(v);
    } else if (!strcmp(line, "holders")) {
      for (const char* p = v; *p;) {
        char* end = nullptr;
        long pid = strtol(p, &end, 10);
        int refs = 1;
        if (*end == ':') refs = static_cast<int>(strtol(end + 1, &end, 10));
        if (pid > 0 && refs > 0) m.holders.push_back({pid, refs});
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p) break;  // junk: stop
      }
    }
  }
  if (!have_path && err) *err = meta_path + ": no absolute path= line";
  return have_path;
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

int create_staged(const std::string& path, std::string* err) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 && err) *err = why("cannot create staged file", path);
  // Exactly kStagedFileMode, whatever the umask: an fchmod only where it took some of it.
  int mask = g_umask.load(std::memory_order_relaxed);
  if (fd >= 0 && (mask < 0 || (mask & kStagedFileMode) != 0)) fchmod(fd, kStagedFileMode);
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
  *hash = XXH64(nullptr, 0, 0);
  if (ranges.empty()) return true;
  buf.resize(kWindow);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (err) *err = why("cannot open staged file", path);
    return false;
  }
  std::unique_ptr<XXH64_state_t, XXH_errorcode (*)(XXH64_state_t*)> h(XXH64_createState(),
                                                                      XXH64_freeState);
  if (!h) {
    ::close(fd);
    if (err) *err = "out of memory hashing " + path;
    return false;
  }
  XXH64_reset(h.get(), 0);
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
      XXH64_update(h.get(), buf.data(), static_cast<size_t>(r));
      a += static_cast<uint64_t>(r);
    }
  ::close(fd);
  *hash = XXH64_digest(h.get());
  return true;
}

void remove_staged(const std::string& data_path, const std::string& meta_path) {
  if (!data_path.empty()) unlink(data_path.c_str());
  if (!meta_path.empty()) unlink(meta_path.c_str());
}

void MappedFile::release(const uint8_t* p, uint64_t n) const {
  // Private memory (read_private) holds the only copy of its bytes: never dropped.
  if (!data_ || mapped_ || p >= data_ + size_ || p + n <= data_) return;
  constexpr uintptr_t kPage = 4096;
  uintptr_t lo = std::max(reinterpret_cast<uintptr_t>(p), reinterpret_cast<uintptr_t>(data_));
  uintptr_t hi =
      std::min(reinterpret_cast<uintptr_t>(p + n), reinterpret_cast<uintptr_t>(data_ + size_));
  // Whole pages only, outward: a page shared with bytes still to be read is read again
  // (a shared file mapping loses nothing), and the mapping covers whole pages.
  lo = lo / kPage * kPage;
  hi = (hi + kPage - 1) / kPage * kPage;
  madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (!data_) return;
  if (mapped_)
    warm::give(const_cast<uint8_t*>(data_), mapped_);
  else
    munmap(const_cast<uint8_t*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : data_(o.data_), size_(o.size_), mapped_(o.mapped_) {
  o.data_ = nullptr;
  o.size_ = 0;
  o.mapped_ = 0;
}

namespace {
// Opens a staged file for reading: its descriptor, and *len = the first `size` bytes
// clamped to what the file holds now. -1 with *err on failure.
int open_staged_for_read(const std::string& path, uint64_t size, uint64_t* len, std::string* err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (err) *err = why("cannot open staged file", path);
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    if (err) *err = why("cannot stat", path);
    close(fd);
    return -1;
  }
  *len = std::min<uint64_t>(size, static_cast<uint64_t>(st.st_size));
  return fd;
}
}  // namespace

bool MappedFile::open(const std::string& path, uint64_t size, std::string* err) {
  // Never map past the real end: touching it would raise SIGBUS.
  int fd = open_staged_for_read(path, size, &size_, err);
  if (fd < 0) return false;
  if (size_ > 0) {
    void* p = mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      if (err) *err = why("cannot mmap", path);
      close(fd);
      size_ = 0;
      return false;
    }
    madvise(p, size_, MADV_SEQUENTIAL);
    data_ = static_cast<const uint8_t*>(p);
  }
  close(fd);
  return true;
}

bool MappedFile::read_private(const std::string& path, uint64_t size, WorkerPool* pool,
                              std::string* err) {
  uint64_t want = 0;
  int fd = open_staged_for_read(path, size, &want, err);
  if (fd < 0) return false;
  if (want == 0) {
    close(fd);
    return true;
  }
  uint64_t len = want;
  void* p = warm::take(want, &len);
  if (!p) {
    p = mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      if (err) *err = why("cannot allocate memory to read", path);
      close(fd);
      return false;
    }
    madvise(p, want, MADV_HUGEPAGE);  // fewer page faults filling it, where allowed
  }
  uint8_t* buf = static_cast<uint8_t*>(p);
  // Slices of 8 MiB read in parallel; a slice read short means the file was
  // cut meanwhile: what it holds ends there (the least end any thread saw).
  constexpr uint64_t kSlice = 8u << 20;
  const uint64_t slices = (want + kSlice - 1) / kSlice;
  std::atomic<uint64_t> end{want};
  std::atomic<int> failed{0};
  auto read_slice = [&](uint64_t i) {
    uint64_t pos = i * kSlice, stop = std::min(want, pos + kSlice);
    while (pos < stop) {
      ssize_t n = pread(fd, buf + pos, stop - pos, static_cast<off_t>(pos));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) failed = errno;
      if (n <= 0) break;
      pos += static_cast<uint64_t>(n);
    }
    if (pos < stop) {
      uint64_t e = end.load();
      while (pos < e && !end.compare_exchange_weak(e, pos)) {
      }
    }
  };
  if (pool && slices > 1) {
    pool_for(*pool, slices, read_slice);
  } else {
    for (uint64_t i = 0; i < slices; ++i) read_slice(i);
  }
  close(fd);
  if (failed) {
    errno = failed;
    if (err) *err = why("cannot read", path);
    warm::give(p, len);
    return false;
  }
  data_ = buf;
  size_ = end.load();  // cut short by a writer: what it held when read
  mapped_ = len;
  return true;
}

}  // namespace ckptfwd::fwd
