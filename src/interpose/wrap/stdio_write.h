// The stdio write guard (wrap_stdio_write.cc): fwrite and fputs check that staging can
// take what they hand to a stream, and fclose/freopen check the stream's last flush.
#pragma once
#include <errno.h>
#include <stdio.h>

#include "interpose/track/versions.h"

namespace ckptfwd::interpose {

// fileno without touching errno (-1 for a null stream or one without an fd).
inline int stream_fd(FILE* f) {
  int saved = errno;
  int fd = f ? fileno(f) : -1;
  errno = saved;
  return fd;
}

// Before fclose or freopen flushes what is left in f's buffer (unseen by the checks so
// far): switches fd, tracked as v, to the real path if the flush would outgrow staging.
void final_flush_check(int fd, FILE* f, Version* v);

}  // namespace ckptfwd::interpose
