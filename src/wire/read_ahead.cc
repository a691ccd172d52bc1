#include "wire/read_ahead.h"

#include <cerrno>
#include <cstring>

namespace ckptfwd::wire {

bool ReadAhead::has_frame() const {
  return end_ - begin_ >= 4 && end_ - begin_ - 4 >= frame_length(buf_ + begin_);
}

bool ReadAhead::fill(int fd, ReadFn rd, size_t want) {
  if (begin_ + want > cap_) {  // room for the whole frame at the front
    memmove(buf_, buf_ + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  while (end_ - begin_ < want) {
    long r = rd(fd, buf_ + end_, cap_ - end_);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    end_ += static_cast<size_t>(r);
  }
  return true;
}

bool ReadAhead::take(int fd, ReadFn rd, size_t limit, char* out, size_t cap, BigFn big,
                     char** payload, size_t* len) {
  if (cap_ < 4 || cap == 0 || !fill(fd, rd, 4)) return false;
  const size_t n = frame_length(buf_ + begin_);
  if (n > limit) return false;
  char* dst = n + 1 <= cap ? out : (big ? big(n + 1) : nullptr);
  if (!dst) return false;
  if (4 + n <= cap_) {
    if (!fill(fd, rd, 4 + n)) return false;
    memcpy(dst, buf_ + begin_ + 4, n);
    begin_ += 4 + n;
  } else {  // larger than the buffer: what is here, then the rest read straight into dst
    size_t have = end_ - begin_ - 4;
    memcpy(dst, buf_ + begin_ + 4, have);
    reset();
    for (size_t got = have; got < n;) {
      long r = rd(fd, dst + got, n - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      got += static_cast<size_t>(r);
    }
  }
  if (begin_ == end_) reset();
  dst[n] = '\0';
  *payload = dst;
  *len = n;
  return true;
}

}  // namespace ckptfwd::wire
