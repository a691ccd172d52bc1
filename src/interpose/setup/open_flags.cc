#include "interpose/setup/open_flags.h"

#include <fcntl.h>

namespace ckptfwd::interpose {

int fopen_mode_to_flags(const char* mode) {
  if (!mode) return -1;
  int acc;
  int extra;
  switch (mode[0]) {
    case 'r':
      acc = O_RDONLY;
      extra = 0;
      break;
    case 'w':
      acc = O_WRONLY;
      extra = O_CREAT | O_TRUNC;
      break;
    case 'a':
      acc = O_WRONLY;
      extra = O_CREAT | O_APPEND;
      break;
    default:
      return -1;
  }
  // glibc looks at no more than 6 modifier characters and stops at ','.
  for (int i = 1; i < 7 && mode[i] && mode[i] != ','; ++i) {
    switch (mode[i]) {
      case '+':
        acc = O_RDWR;
        break;
      case 'x':
        extra |= O_EXCL;
        break;
      case 'e':
        extra |= O_CLOEXEC;
        break;
      default:
        break;  // 'b', 't', 'm', 'c' do not change the open flags
    }
  }
  return acc | extra;
}

int staged_open_flags(int app_flags) {
  return app_flags & ~(O_CREAT | O_EXCL | O_TRUNC | O_NOFOLLOW | O_DIRECT);
}

bool open_is_capturable(int flags) { return (flags & (O_DIRECTORY | O_PATH)) == 0; }

bool open_needs_mode(int flags) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

bool staged_fopen_mode(const char* mode, char* out, size_t cap) {
  size_t n = 0;
  bool in_ccs = false;  // after ',' (",ccs=UTF-8") every character is kept
  for (const char* p = mode; *p; ++p) {
    if (*p == ',') in_ccs = true;
    if (*p == 'x' && !in_ccs) continue;
    if (n + 1 >= cap) return false;
    out[n++] = *p;
  }
  if (cap == 0) return false;
  out[n] = '\0';
  return true;
}

}  // namespace ckptfwd::interpose
