#include "store/container/direct_read.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "store/container/container_format.h"

namespace ckptfwd {

namespace {
std::atomic<bool> g_direct_read_default{true};
}  // namespace

void set_direct_read_default(bool on) { g_direct_read_default.store(on); }
bool direct_read_default() { return g_direct_read_default.load(); }

AlignedBuffer::~AlignedBuffer() { std::free(p_); }

bool AlignedBuffer::reserve(size_t n) {
  if (n <= cap_) return true;
  const size_t want = (n + DirectRange::kAlign - 1) / DirectRange::kAlign * DirectRange::kAlign;
  void* q = std::aligned_alloc(DirectRange::kAlign, want);
  if (!q) return false;
  std::free(p_);
  p_ = static_cast<uint8_t*>(q);
  cap_ = want;
  return true;
}

DirectRange::~DirectRange() {
  if (fd_ >= 0) ::close(fd_);
}

void DirectRange::open(const char* path, bool on) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = on ? ::open(path, O_RDONLY | O_DIRECT | O_CLOEXEC) : -1;
  usable_.store(fd_ >= 0, std::memory_order_relaxed);
}

bool DirectRange::read(int buffered_fd, uint64_t off, size_t n, AlignedBuffer& buf,
                       const uint8_t** data) const {
  if (n >= kMinDirectBytes && usable_.load(std::memory_order_relaxed)) {
    const uint64_t start = off / kAlign * kAlign;
    const uint64_t end = (off + n + kAlign - 1) / kAlign * kAlign;
    const size_t span = static_cast<size_t>(end - start);
    if (!buf.reserve(span)) {
      errno = ENOMEM;
      return false;
    }
    size_t got = 0;
    while (got < span) {
      ssize_t r = ::pread(fd_, buf.data() + got, span - got, static_cast<off_t>(start + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0 || static_cast<size_t>(r) % kAlign != 0) {
        got += r > 0 ? static_cast<size_t>(r) : 0;
        break;  // the end of the file (its last block is short), a refusal or an error
      }
      got += static_cast<size_t>(r);
    }
    if (start + got >= off + n) {
      *data = buf.data() + (off - start);
      return true;
    }
    // Short of the range: the file system refused (EINVAL) or the read failed; the
    // buffered read below tells a real error or a range past the end from a refusal.
    usable_.store(false, std::memory_order_relaxed);
  }
  if (!buf.reserve(n == 0 ? 1 : n)) {
    errno = ENOMEM;
    return false;
  }
  if (!container_format::pread_all(buffered_fd, buf.data(), n, off)) return false;
  *data = buf.data();
  return true;
}

}  // namespace ckptfwd
