#include "forwarder/group/frame.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/le_codec.h"

namespace ckptfwd::fwd::group {
namespace {

bool write_all(int sock, const void* p, size_t n, std::string* err) {
  const char* c = static_cast<const char*>(p);
  while (n) {
    ssize_t w = ::send(sock, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (err) *err = std::string("send: ") + strerror(w < 0 ? errno : EPIPE);
      return false;
    }
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int sock, void* p, size_t n, std::string* err) {
  char* c = static_cast<char*>(p);
  while (n) {
    ssize_t r = ::recv(sock, c, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (err)
        *err = r == 0 ? "the peer closed the connection" : std::string("recv: ") + strerror(errno);
      return false;
    }
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

uint32_t get32(const char* b) {
  LeDecoder d(reinterpret_cast<const uint8_t*>(b), 4);
  return d.u32();
}
uint64_t get64(const char* b) {
  LeDecoder d(reinterpret_cast<const uint8_t*>(b), 8);
  return d.u64();
}

}  // namespace

bool send_frame(int sock, const Frame& f, std::string* err, int body_fd,
                const std::vector<Range>& ranges) {
  uint64_t len = f.body.size();
  if (body_fd >= 0)
    for (const Range& r : ranges) len += r.len;
  LeEncoder head;
  head.u32(kFrameMagic);
  head.u32(static_cast<uint32_t>(f.fields.size()));
  for (const std::string& x : f.fields) head.str(x);
  head.u64(len);
  if (!write_all(sock, head.buf.data(), head.buf.size(), err)) return false;
  if (!write_all(sock, f.body.data(), f.body.size(), err)) return false;
  if (body_fd < 0) return true;
  char buf[1 << 16];
  for (const Range& rg : ranges) {
    for (uint64_t done = 0; done < rg.len;) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof(buf), rg.len - done));
      ssize_t r = ::pread(body_fd, buf, want, static_cast<off_t>(rg.off + done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        if (err)
          *err = r == 0 ? "the file is shorter than the body"
                        : std::string("pread: ") + strerror(errno);
        return false;  // the peer sees a cut frame and drops the connection
      }
      if (!write_all(sock, buf, static_cast<size_t>(r), err)) return false;
      done += static_cast<uint64_t>(r);
    }
  }
  return true;
}

bool recv_head(int sock, Frame& f, uint64_t* body_len, std::string* err) {
  f.fields.clear();
  f.body.clear();
  char b[8];
  if (!read_all(sock, b, 8, err)) return false;
  if (get32(b) != kFrameMagic) {
    if (err) *err = "not a ckptfwd group frame";
    return false;
  }
  const uint32_t n = get32(b + 4);
  if (n > kMaxFields) {
    if (err) *err = "too many fields in a frame";
    return false;
  }
  f.fields.resize(n);
  for (std::string& x : f.fields) {
    if (!read_all(sock, b, 4, err)) return false;
    const uint32_t len = get32(b);
    if (len > kMaxFieldBytes) {
      if (err) *err = "a frame field is too long";
      return false;
    }
    x.resize(len);
    if (len && !read_all(sock, x.data(), len, err)) return false;
  }
  if (!read_all(sock, b, 8, err)) return false;
  *body_len = get64(b);
  if (*body_len > kMaxBodyBytes) {
    if (err) *err = "a frame body is too long";
    return false;
  }
  return true;
}

bool recv_body(int sock, uint64_t len, std::string& out, uint64_t max, std::string* err) {
  if (len > max) {
    if (err) *err = "a frame body is larger than this message allows";
    return false;
  }
  out.resize(static_cast<size_t>(len));
  return len == 0 || read_all(sock, out.data(), out.size(), err);
}

bool recv_body_to_fd(int sock, uint64_t len, int fd, uint64_t off, std::string* err) {
  char buf[1 << 16];
  for (uint64_t done = 0; done < len;) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof(buf), len - done));
    if (!read_all(sock, buf, want, err)) return false;
    for (size_t w = 0; w < want;) {
      ssize_t r = ::pwrite(fd, buf + w, want - w, static_cast<off_t>(off + done + w));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        if (err) *err = std::string("pwrite: ") + strerror(r < 0 ? errno : ENOSPC);
        return false;
      }
      w += static_cast<size_t>(r);
    }
    done += want;
  }
  return true;
}

bool skip_body(int sock, uint64_t len, std::string* err) {
  char buf[1 << 16];
  for (uint64_t done = 0; done < len;) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof(buf), len - done));
    if (!read_all(sock, buf, want, err)) return false;
    done += want;
  }
  return true;
}

bool recv_frame(int sock, Frame& f, uint64_t max, std::string* err) {
  uint64_t len = 0;
  return recv_head(sock, f, &len, err) && recv_body(sock, len, f.body, max, err);
}

}  // namespace ckptfwd::fwd::group
