#include "wire/protocol.h"

#include <cerrno>
#include <cstring>

namespace ckptfwd::wire {

size_t encode(char* buf, size_t cap, const char* const* fields, size_t n) {
  size_t pos = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t len = strlen(fields[i]);
    if (pos + len + 1 > cap) return 0;
    memcpy(buf + pos, fields[i], len);
    pos += len;
    if (i + 1 < n) buf[pos++] = '\0';
  }
  return pos == 0 && n == 0 ? 0 : pos;
}

bool decode(char* buf, size_t len, Fields& out) {
  buf[len] = '\0';
  out.n = 0;
  size_t start = 0;
  for (size_t i = 0; i <= len; ++i) {
    if (buf[i] != '\0') continue;
    if (out.n == kMaxFields) return false;
    out.f[out.n++] = buf + start;
    start = i + 1;
  }
  return out.n > 0;
}

static bool write_all(int fd, const char* p, size_t len, WriteFn wr) {
  while (len > 0) {
    long w = wr(fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    len -= static_cast<size_t>(w);
  }
  return true;
}

static bool read_all(int fd, char* p, size_t len, ReadFn rd) {
  while (len > 0) {
    long r = rd(fd, p, len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    len -= static_cast<size_t>(r);
  }
  return true;
}

static bool send_any(int fd, const char* payload, size_t len, WriteFn wr) {
  unsigned char hdr[4] = {static_cast<unsigned char>(len), static_cast<unsigned char>(len >> 8),
                          static_cast<unsigned char>(len >> 16),
                          static_cast<unsigned char>(len >> 24)};
  // A small frame goes out in one write: sent in two, the peer may wake for the header
  // alone and sleep again until the payload follows (two context switches per message
  // instead of one, on every OPEN of a restart).
  char one[1024];
  if (len <= sizeof(one) - 4) {
    memcpy(one, hdr, 4);
    memcpy(one + 4, payload, len);
    return write_all(fd, one, len + 4, wr);
  }
  return write_all(fd, reinterpret_cast<const char*>(hdr), 4, wr) &&
         write_all(fd, payload, len, wr);
}

bool send_frame(int fd, const char* payload, size_t len, WriteFn wr) {
  return len <= kMaxFrame && send_any(fd, payload, len, wr);
}

bool send_reply_frame(int fd, const char* payload, size_t len, WriteFn wr) {
  return len <= kMaxReplyFrame && send_any(fd, payload, len, wr);
}

size_t frame_length(const char* hdr) {
  const unsigned char* h = reinterpret_cast<const unsigned char*>(hdr);
  return h[0] | (h[1] << 8) | (h[2] << 16) | (static_cast<size_t>(h[3]) << 24);
}

bool recv_reply(int fd, char* buf, size_t cap, ReadFn rd, BigFn big, char** payload, size_t* len) {
  if (cap < 5) return false;
  size_t have = 0;
  while (have < 4) {
    long r = rd(fd, buf + have, cap - 1 - have);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    have += static_cast<size_t>(r);
  }
  size_t n = frame_length(buf);
  if (n > kMaxReplyFrame || have > 4 + n) return false;  // too large, or bytes past it
  char* out = buf + 4;
  if (4 + n + 1 > cap) {  // larger than buf: the rest goes into a buffer of its size
    out = big(n + 1);
    if (!out) return false;
    memcpy(out, buf + 4, have - 4);
  }
  if (!read_all(fd, out + (have - 4), n - (have - 4), rd)) return false;
  out[n] = '\0';
  *payload = out;
  *len = n;
  return true;
}

long recv_frame(int fd, char* buf, size_t cap, ReadFn rd) {
  char hdr[4];
  if (!read_all(fd, hdr, 4, rd)) return -1;
  size_t len = frame_length(hdr);
  if (len > kMaxFrame || len + 1 > cap) return -1;
  if (!read_all(fd, buf, len, rd)) return -1;
  buf[len] = '\0';
  return static_cast<long>(len);
}

bool parse_i64(const char* s, long long& out) {
  bool neg = *s == '-';
  if (neg) ++s;
  unsigned long long v;
  if (!parse_u64(s, v)) return false;
  out = neg ? -static_cast<long long>(v) : static_cast<long long>(v);
  return true;
}

int64_t parse_whole_end(const char* text) {
  long long end = -1;
  return parse_i64(text, end) && end >= 0 && static_cast<uint64_t>(end) <= kMaxExtentEnd ? end : -1;
}

bool parse_u64(const char* s, unsigned long long& out) {
  if (*s == '\0') return false;
  unsigned long long v = 0;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9') return false;
    unsigned long long nv = v * 10 + static_cast<unsigned>(*s - '0');
    if (nv / 10 != v) return false;  // overflow
    v = nv;
  }
  out = v;
  return true;
}

bool parse_octal(const char* s, unsigned& out) {
  if (*s == '\0') return false;
  unsigned v = 0;
  for (; *s; ++s) {
    if (*s < '0' || *s > '7' || v > (~0u >> 3)) return false;
    v = v * 8 + static_cast<unsigned>(*s - '0');
  }
  out = v;
  return true;
}

static char* fmt_unsigned(char* buf, unsigned long long v, unsigned base, bool neg) {
  char tmp[32];
  int n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % base);
    v /= base;
  } while (v);
  char* p = buf;
  if (neg) *p++ = '-';
  while (n) *p++ = tmp[--n];
  *p = '\0';
  return buf;
}

char* fmt_i64(char* buf, long long v) {
  return v < 0 ? fmt_unsigned(buf, 0ull - static_cast<unsigned long long>(v), 10, true)
               : fmt_unsigned(buf, static_cast<unsigned long long>(v), 10, false);
}

char* fmt_octal(char* buf, unsigned v) { return fmt_unsigned(buf, v, 8, false); }

}  // namespace ckptfwd::wire
