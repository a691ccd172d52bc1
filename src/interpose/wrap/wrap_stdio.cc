// stdio entry points. glibc's fopen/fclose/freopen open and close their fd internally
// (not through the wrapped symbols), so they are wrapped themselves; the FILE's fd is a
// staged file and stdio's own writes land in it unseen, like any other write. Because
// those writes are unseen, fwrite and fputs check before handing bytes to a stream
// whether staging can take them (wrap_stdio_write.cc).
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#include "interpose/setup/open_flags.h"
#include "interpose/setup/state.h"
#include "interpose/track/blocked_time.h"
#include "interpose/track/extent_log.h"
#include "interpose/track/versions.h"
#include "interpose/wrap/real.h"
#include "interpose/wrap/stdio_write.h"

using namespace ckptfwd::interpose;

namespace {

// Opens a captured path through the forwarder. Returns the stream, or nullptr with
// *pass true (do the real call) or false (errno set).
FILE* fopen_core(const char* path, const char* mode, FILE* reuse, bool* pass,
                 FILE* (*real_freopen)(const char*, const char*, FILE*)) {
  *pass = true;
  int flags = fopen_mode_to_flags(mode);
  char norm[PATH_MAX];
  int saved = errno;
  if (flags < 0 || !captured_path(AT_FDCWD, path, norm)) {
    errno = saved;
    return nullptr;
  }
  char smode[64];
  if (!staged_fopen_mode(mode, smode, sizeof(smode))) {
    errno = saved;
    return nullptr;
  }
  Busy busy;
  OpenReply r;
  // No retry for freopen: its failed open has closed the stream.
  FILE* f = open_staged<FILE*>(norm, flags, 0666, r, !reuse, nullptr, [&](const char* staged) {
    return reuse ? real_freopen(staged, smode, reuse) : real::fopen()(staged, smode);
  });
  // stdio writes through libc's internal calls, which the library cannot see: a shared
  // version opened here has unknown extents (the forwarder uses the staged data extents).
  r.shared = false;
  r.extents = false;
  int h = take_reply(r.status, r.err, saved);
  if (h <= 0) {
    if (h < 0) *pass = false;
    return nullptr;
  }
  if (!f) {
    if (r.vid == 0) {
      *pass = false;
      return nullptr;
    }
    if (!send_abandon(r.vid, norm)) {
      *pass = false;
      errno = EIO;
      return nullptr;
    }
    note_fallback("staged file could not be opened", norm);
    errno = saved;
    return nullptr;
  }
  if (!track_fd(stream_fd(f), r, norm, effective_mode(O_CREAT, 0666))) {
    real::fclose()(f);
    errno = saved;
    return nullptr;  // pass: the caller opens the real path
  }
  *pass = false;
  errno = saved;
  return f;
}

FILE* fopen_common(const char* path, const char* mode,
                   FILE* (*real_fopen)(const char*, const char*)) {
  if (!intercepting()) return real_fopen(path, mode);
  bool pass = true;
  FILE* f = fopen_core(path, mode, nullptr, &pass, nullptr);
  return pass ? real_fopen(path, mode) : f;
}

FILE* freopen_common(const char* path, const char* mode, FILE* stream,
                     FILE* (*real_freopen)(const char*, const char*, FILE*)) {
  if (!intercepting()) return real_freopen(path, mode, stream);
  // freopen flushes and closes the old fd inside glibc: check the flush as fclose does,
  // unhook the fd first, report it after.
  int old_fd = stream_fd(stream);
  if (Version* w = g_fds.get(old_fd)) final_flush_check(old_fd, stream, w);
  Version* old = g_fds.detach(old_fd);
  FILE* f = nullptr;
  if (!path) {
    // Same file, new mode: glibc reopens it via /proc/self/fd, i.e. the same staged file.
    f = real_freopen(path, mode, stream);
    if (f && old) {
      Busy busy;
      Version* prev = nullptr;
      if (g_fds.attach(stream_fd(f), old, &prev) && prev) release_version(prev);
    }
  } else {
    bool pass = true;
    f = fopen_core(path, mode, stream, &pass, real_freopen);
    if (pass)
      f = real_freopen(path, mode, stream);
    else if (!f && stream) {
      int e = errno;  // freopen failing leaves the stream closed
      real::fclose()(stream);
      errno = e;
    }
  }
  if (old) {
    Busy busy;
    ErrnoKeeper keep;
    release_version(old);
  }
  return f;
}

}  // namespace

CKPTFWD_EXPORT FILE* fopen(const char* path, const char* mode) {
  return fopen_common(path, mode, real::fopen());
}
CKPTFWD_EXPORT FILE* fopen64(const char* path, const char* mode) {
  return fopen_common(path, mode, real::fopen64());
}
CKPTFWD_EXPORT FILE* freopen(const char* path, const char* mode, FILE* stream) {
  return freopen_common(path, mode, stream, real::freopen());
}
CKPTFWD_EXPORT FILE* freopen64(const char* path, const char* mode, FILE* stream) {
  return freopen_common(path, mode, stream, real::freopen64());
}
// The fd is already tracked (or not): nothing to add.
// A stream over a tracked fd writes through libc's internal calls, which the library cannot
// see: the fd's recorded extents stop being the whole truth (the forwarder then commits
// the staged file's data extents).
CKPTFWD_EXPORT FILE* fdopen(int fd, const char* mode) {
  if (!t_busy && g_fds.capacity() != 0)
    if (Version* v = g_fds.get(fd); v && v->ext) extent_log_mark_lost(v->ext);
  return real::fdopen()(fd, mode);
}

CKPTFWD_EXPORT int fclose(FILE* stream) {
  if (t_busy || g_fds.capacity() == 0) return real::fclose()(stream);
  int fd = stream_fd(stream);
  if (Version* w = g_fds.get(fd)) final_flush_check(fd, stream, w);
  Version* v = g_fds.detach(fd);
  unsigned long long t0 = v ? blocked_clock_ns() : 0;
  int rc = real::fclose()(stream);  // flushes into the staged file, then closes it
  if (v) {
    Busy busy;
    ErrnoKeeper keep;
    v->blocked_ns.fetch_add(blocked_clock_ns() - t0, std::memory_order_relaxed);
    if (!release_version(v) && rc == 0) {  // as close(): the bytes were kept nowhere
      keep.fail(EIO);
      rc = EOF;
    }
  }
  return rc;
}
