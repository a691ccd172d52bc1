#include "store/container/direct_append.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "store/container/container_format.h"

namespace ckptfwd {

namespace {
// Buffers of finished appenders, for the next ones: two batches may write at once, and a
// third buffer covers a container started while another is being finished.
constexpr size_t kKeptBuffers = 3;
std::mutex g_pool_mu;
// Never destroyed: a batch still writing when the process exits may give its buffer back
// after static destructors have run, and the kept buffers stay reachable from here (a
// destroyed vector would leave them unreachable, which LeakSanitizer reports as leaks).
std::vector<uint8_t*>& g_pool = *new std::vector<uint8_t*>();

uint8_t* take_buffer() {
  {
    std::lock_guard<std::mutex> g(g_pool_mu);
    if (!g_pool.empty()) {
      uint8_t* b = g_pool.back();
      g_pool.pop_back();
      return b;
    }
  }
  return static_cast<uint8_t*>(
      std::aligned_alloc(DirectAppender::kAlign, DirectAppender::kBufferBytes));
}

void give_buffer(uint8_t* b) {
  if (!b) return;
  {
    std::lock_guard<std::mutex> g(g_pool_mu);
    if (g_pool.size() < kKeptBuffers) {
      g_pool.push_back(b);
      return;
    }
  }
  std::free(b);
}

bool set_o_direct(int fd, bool on) {
  int fl = ::fcntl(fd, F_GETFL);
  if (fl < 0) return false;
  int want = on ? (fl | O_DIRECT) : (fl & ~O_DIRECT);
  return want == fl || ::fcntl(fd, F_SETFL, want) == 0;
}
}  // namespace

DirectAppender::DirectAppender(int fd, bool direct) : fd_(fd), direct_(direct) {
  if (direct_) buf_ = take_buffer();
  if (!buf_) direct_ = false;  // no memory for the buffer: buffered, as it comes
}

DirectAppender::~DirectAppender() { give_buffer(buf_); }

bool DirectAppender::write_buffered(const uint8_t* p, size_t n) {
  return container_format::write_all(fd_, p, n);
}

bool DirectAppender::append(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (!direct_) return write_buffered(p, n);
  while (n > 0) {
    size_t take = std::min(n, kBufferBytes - used_);
    memcpy(buf_ + used_, p, take);
    used_ += take;
    p += take;
    n -= take;
    if (used_ == kBufferBytes) {
      if (!flush_full()) return false;
      if (!direct_) return write_buffered(p, n);  // fell back: the rest as it comes
    }
  }
  return true;
}

bool DirectAppender::flush_full() {
  if (!o_direct_set_) {
    if (!set_o_direct(fd_, true)) {  // the file system does not do direct I/O
      direct_ = false;
      bool ok = write_buffered(buf_, used_);
      used_ = 0;
      return ok;
    }
    o_direct_set_ = true;
  }
  size_t done = 0;
  while (done < used_) {
    ssize_t w = ::write(fd_, buf_ + done, used_ - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno != EINVAL) return false;
    if (w > 0) done += static_cast<size_t>(w);
    if (w < 0 || done % kAlign != 0) {
      // Refused (EINVAL: an alignment this device does not take) or short at an unaligned
      // point: the rest of this file goes through the page cache.
      int saved = errno;
      if (!set_o_direct(fd_, false)) {
        errno = saved;
        return false;
      }
      o_direct_set_ = false;
      direct_ = false;
      bool ok = write_buffered(buf_ + done, used_ - done);
      direct_bytes_ += done;
      used_ = 0;
      return ok;
    }
  }
  direct_bytes_ += done;
  used_ = 0;
  return true;
}

bool DirectAppender::finish() {
  if (o_direct_set_) {
    if (!set_o_direct(fd_, false)) return false;
    o_direct_set_ = false;
  }
  direct_ = false;
  bool ok = used_ == 0 || write_buffered(buf_, used_);
  used_ = 0;
  return ok;
}

}  // namespace ckptfwd
