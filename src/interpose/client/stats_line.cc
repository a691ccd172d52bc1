#include "interpose/client/stats_line.h"

#include <stdio.h>
#include <string.h>

namespace ckptfwd::interpose {

size_t utf8_sequence_length(const unsigned char* p, size_t avail) {
  if (avail == 0) return 0;
  unsigned char c = p[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;  // no overlong forms
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (avail < len || p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < len; ++i)
    if ((p[i] & 0xC0) != 0x80) return 0;
  return len;
}

size_t format_client_stats_line(char* buf, size_t cap, int pid, int rank, long fallbacks,
                                const char* reason) {
  if (cap < 128) return 0;
  int head = snprintf(buf, cap,
                      "{\"source\":\"client\",\"pid\":%d,\"rank\":%d,\"fallbacks\":%ld,"
                      "\"reason\":\"",
                      pid, rank, fallbacks);
  if (head <= 0 || static_cast<size_t>(head) >= cap) return 0;
  size_t k = static_cast<size_t>(head);
  const size_t room = cap - 4;  // the closing "}, the newline and the NUL
  const unsigned char* p = reinterpret_cast<const unsigned char*>(reason ? reason : "");
  size_t left = strlen(reinterpret_cast<const char*>(p));
  while (left > 0) {
    unsigned char c = *p;
    size_t n = utf8_sequence_length(p, left);
    if (c == '"' || c == '\\') {
      if (k + 2 > room) break;
      buf[k++] = '\\';
      buf[k++] = static_cast<char>(c);
    } else if (n == 1 || n == 0) {
      if (k + 1 > room) break;
      buf[k++] = n == 0 ? '?' : c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c);
      n = 1;
    } else {
      if (k + n > room) break;
      memcpy(buf + k, p, n);
      k += n;
    }
    p += n ? n : 1;
    left -= n ? n : 1;
  }
  memcpy(buf + k, "\"}\n", 4);
  return k + 3;
}

}  // namespace ckptfwd::interpose
