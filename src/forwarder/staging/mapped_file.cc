#include "forwarder/staging/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "forwarder/staging/staging.h"
#include "forwarder/staging/warm_memory.h"
#include "forwarder/util/worker_pool.h"
#include "store/container/content_hash.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14; older kernels refuse it (EINVAL), nothing lost
#endif

namespace ckptfwd::fwd {

namespace {
// madvise(advice) on the whole pages that [lo, hi) touches: outward, so that a page shared
// with bytes beside the range is included (a mapping covers whole pages).
void advise_pages(uintptr_t lo, uintptr_t hi, int advice) {
  constexpr uintptr_t kPage = 4096;
  lo = lo / kPage * kPage;
  hi = (hi + kPage - 1) / kPage * kPage;
  madvise(reinterpret_cast<void*>(lo), hi - lo, advice);
}
}  // namespace

void MappedFile::release(const uint8_t* p, uint64_t n) const {
  // Private memory (read_private, a small file's copy) holds the only copy of its bytes:
  // never dropped.
  if (!data_ || is_private() || p >= data_ + size_ || p + n <= data_) return;
  // Whole pages, outward: a page shared with bytes still to be read is read again (a
  // shared file mapping loses nothing).
  advise_pages(
      std::max(reinterpret_cast<uintptr_t>(p), reinterpret_cast<uintptr_t>(data_)),
      std::min(reinterpret_cast<uintptr_t>(p + n), reinterpret_cast<uintptr_t>(data_ + size_)),
      MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (!data_ || copy_) return;
  if (mapped_)
    warm::give(const_cast<uint8_t*>(data_), mapped_);
  else
    munmap(const_cast<uint8_t*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : data_(o.data_),
      size_(o.size_),
      mapped_(o.mapped_),
      copy_(std::move(o.copy_)),
      read_hash_(o.read_hash_) {
  o.data_ = nullptr;
  o.size_ = 0;
  o.mapped_ = 0;
  o.read_hash_.reset();
}

namespace {
// Opens a staged file for reading: its descriptor, and *len = the first `size` bytes
// clamped to what the file holds now. -1 with *err on failure.
int open_staged_for_read(const std::string& path, uint64_t size, uint64_t* len, std::string* err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (err) *err = errno_message("cannot open staged file", path);
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    if (err) *err = errno_message("cannot stat", path);
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
      if (err) *err = errno_message("cannot mmap", path);
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

bool MappedFile::copy_small(const std::string& path, uint64_t size, std::string* err) {
  int fd = open_staged_for_read(path, std::min(size, kCopyMax), &size_, err);
  if (fd < 0) return false;
  copy_.reset(new (std::nothrow) uint8_t[std::max<uint64_t>(size_, 1)]);
  uint64_t got = 0;
  int failed = copy_ ? 0 : ENOMEM;
  while (!failed && got < size_) {
    ssize_t n = pread(fd, copy_.get() + got, size_ - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failed = errno;
    if (n <= 0) break;  // n == 0: cut meanwhile, what it held when read
    got += static_cast<uint64_t>(n);
  }
  close(fd);
  if (failed) {
    errno = failed;
    if (err) *err = errno_message("cannot read staged file", path);
    copy_.reset();
    size_ = 0;
    return false;
  }
  size_ = got;
  data_ = copy_.get();
  read_hash_ = content_hash(data_, size_);
  return true;
}

namespace {
// The content hash of a buffer filled slice by slice in any order, taken in order as the slices
// come in: the thread that completes a slice hashes it, and the slices after it already in, unless
// another thread is hashing (it takes them then). finish() hashes whatever is left; the result
// stands only if every slice came in whole.
class InOrderHash {
 public:
  InOrderHash(const uint8_t* buf, uint64_t len, uint64_t slice)
      : buf_(buf), len_(len), slice_(slice), in_((len + slice - 1) / slice) {}
  void slice_in(uint64_t i) {
    in_[i].store(true);
    // A slice that came in while the hashing thread was leaving is seen by its re-check
    // (or, as every slice, by finish()).
    while (std::unique_lock<std::mutex> lk{mu_, std::try_to_lock}) {
      hash_ready();
      lk.unlock();
      if (next_.load() >= in_.size() || !in_[next_.load()].load()) return;
    }
  }
  std::optional<uint64_t> finish() {
    std::lock_guard<std::mutex> lk(mu_);
    hash_ready();
    if (!state_.ok() || next_.load() < in_.size()) return std::nullopt;
    return state_.digest();
  }

 private:
  void hash_ready() {          // under mu_
    if (!state_.ok()) return;  // no memory for it: the pipeline hashes the bytes itself
    uint64_t i = next_.load();
    for (; i < in_.size() && in_[i].load(); ++i) {
      const uint64_t at = i * slice_;
      state_.update(buf_ + at, std::min(slice_, len_ - at));
    }
    next_.store(i);
  }
  const uint8_t* buf_;
  uint64_t len_, slice_;
  std::vector<std::atomic<bool>> in_;
  std::atomic<uint64_t> next_{0};  // the first slice not hashed yet
  std::mutex mu_;
  ContentHashStream state_;
};
}  // namespace

bool MappedFile::read_private(const std::string& path, uint64_t size, WorkerPool* pool,
                              std::string* err) {
  read_hash_.reset();
  uint64_t want = 0;
  int fd = open_staged_for_read(path, size, &want, err);
  if (fd < 0) return false;
  if (want == 0) {
    close(fd);
    read_hash_ = content_hash(nullptr, 0);
    return true;
  }
  uint64_t len = want;
  void* p = warm::take(want, &len);
  if (!p) {
    p = mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      if (err) *err = errno_message("cannot allocate memory to read", path);
      close(fd);
      return false;
    }
    madvise(p, want, MADV_HUGEPAGE);  // fewer page faults filling it, where allowed
  }
  uint8_t* buf = static_cast<uint8_t*>(p);
  // Slices read in parallel, small enough to be hashed from the reading core's cache; a
  // slice read short means the file was cut meanwhile: what it holds ends there (the
  // least end any thread saw), and no hash is taken.
  constexpr uint64_t kSlice = 2u << 20;
  const uint64_t slices = (want + kSlice - 1) / kSlice;
  std::atomic<uint64_t> end{want};
  std::atomic<int> failed{0};
  InOrderHash hash(buf, want, kSlice);
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
      return;
    }
    hash.slice_in(i);
  };
  if (pool && slices > 1) {
    pool_for(*pool, slices, read_slice);
  } else {
    for (uint64_t i = 0; i < slices; ++i) read_slice(i);
  }
  close(fd);
  if (failed) {
    errno = failed;
    if (err) *err = errno_message("cannot read", path);
    warm::give(p, len);
    return false;
  }
  data_ = buf;
  size_ = end.load();  // cut short by a writer: what it held when read
  mapped_ = len;
  if (size_ == want) read_hash_ = hash.finish();
  return true;
}

void populate_for_read(const uint8_t* p, uint64_t n) {
  if (n)
    advise_pages(reinterpret_cast<uintptr_t>(p), reinterpret_cast<uintptr_t>(p + n),
                 MADV_POPULATE_READ);
}

}  // namespace ckptfwd::fwd
