#include "forwarder/daemon/request_reader.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ckptfwd::fwd {

long RequestReader::next(int fd, char** payload) {
  size_t have = carry_.size();
  if (have) memcpy(buf_.data(), carry_.data(), have);
  carry_.clear();
  const size_t cap = buf_.size() - 1;  // one byte for the NUL after the payload
  // Reads until `want` bytes are here, each read asking for all the room there is.
  auto fill = [&](size_t want) {
    while (have < want) {
      ssize_t r = ::read(fd, buf_.data() + have, cap - have);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      have += static_cast<size_t>(r);
    }
    return true;
  };
  if (!fill(4)) return -1;
  size_t n = wire::frame_length(buf_.data());
  if (n > wire::kMaxFrame || !fill(4 + n)) return -1;
  carry_.assign(buf_.data() + 4 + n, buf_.data() + have);
  buf_[4 + n] = '\0';
  *payload = buf_.data() + 4;
  return static_cast<long>(n);
}

}  // namespace ckptfwd::fwd
