// stdio entry points. glibc's fopen/fclose/freopen open and close their fd internally
// (not through the wrapped symbols), so they are wrapped themselves; the FILE's fd is a
// staged file and stdio's own writes land in it unseen, like any other write.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#include "interpose/open_flags.h"
#include "interpose/real.h"
#include "interpose/state.h"
#include "interpose/versions.h"

using namespace ckptfwd::interpose;

namespace {

int file_fd(FILE* f) {
  int saved = errno;
  int fd = f ? fileno(f) : -1;
  errno = saved;
  return fd;
}

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
  Busy busy;
  OpenReply r;
  request_open(norm, flags, 0666, r);
  // stdio writes through libc's internal calls, which the library cannot see: a shared
  // version opened here has unknown extents (the forwarder uses the staged data extents).
  r.shared = false;
  if (r.status == Status::kErr) {
    *pass = false;
    errno = r.err;
    return nullptr;
  }
  if (r.status != Status::kOk) {
    errno = saved;
    return nullptr;
  }
  char smode[64];
  if (!staged_fopen_mode(mode, smode, sizeof(smode))) {
    if (r.vid) send_abandon(r.vid);
    errno = saved;
    return nullptr;
  }
  FILE* f = reuse ? real_freopen(r.staged, smode, reuse) : real::fopen()(r.staged, smode);
  if (!f) {
    if (r.vid == 0) {
      *pass = false;
      return nullptr;
    }
    send_abandon(r.vid);
    note_fallback("staged file could not be opened", norm);
    errno = saved;
    return nullptr;
  }
  if (!track_fd(file_fd(f), r, norm, effective_mode(O_CREAT, 0666))) {
    real::fclose()(f);
    errno = saved;
    return nullptr;  // pass: the caller opens the real path
  }
  *pass = false;
  errno = saved;
  return f;
}

FILE* fopen_common(const char* path, const char* mode, FILE* (*real_fopen)(const char*, const char*)) {
  if (!intercepting()) return real_fopen(path, mode);
  bool pass = true;
  FILE* f = fopen_core(path, mode, nullptr, &pass, nullptr);
  return pass ? real_fopen(path, mode) : f;
}

FILE* freopen_common(const char* path, const char* mode, FILE* stream,
                     FILE* (*real_freopen)(const char*, const char*, FILE*)) {
  if (!intercepting()) return real_freopen(path, mode, stream);
  // freopen closes the old fd inside glibc: unhook it first, report it after.
  Version* old = g_fds.detach(file_fd(stream));
  FILE* f = nullptr;
  if (!path) {
    // Same file, new mode: glibc reopens it via /proc/self/fd, i.e. the same staged file.
    f = real_freopen(path, mode, stream);
    if (f && old) {
      Busy busy;
      Version* prev = nullptr;
      if (g_fds.attach(file_fd(f), old, &prev) && prev) release_version(prev);
    }
  } else {
    bool pass = true;
    f = fopen_core(path, mode, stream, &pass, real_freopen);
    if (pass) f = real_freopen(path, mode, stream);
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
CKPTFWD_EXPORT FILE* fdopen(int fd, const char* mode) { return real::fdopen()(fd, mode); }

CKPTFWD_EXPORT int fclose(FILE* stream) {
  if (t_busy || g_fds.capacity() == 0) return real::fclose()(stream);
  Version* v = g_fds.detach(file_fd(stream));
  int rc = real::fclose()(stream);  // flushes into the staged file, then closes it
  if (v) {
    Busy busy;
    ErrnoKeeper keep;
    release_version(v);
  }
  return rc;
}
