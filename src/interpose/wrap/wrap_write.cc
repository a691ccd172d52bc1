// The write family. Untracked fds: one table load, then the real call. Tracked fds: the
// real call, timed (blocked_time.h); only a budget check (when the forwarder set one), an
// ENOSPC or a short write adds work, and then the fd moves to the real path before the
// write is (re)done.
// A version shared across nodes also records where the bytes went (extent_log.h), and a
// write made inside a typed MPI write records a dtype hint (hint_log.h).
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "interpose/setup/state.h"
#include "interpose/track/blocked_time.h"
#include "interpose/track/versions.h"
#include "interpose/wrap/real.h"

namespace ckptfwd::interpose {
namespace {

size_t iov_bytes(const struct iovec* iov, int n) {
  size_t sum = 0;
  for (int i = 0; iov && i < n; ++i) sum += iov[i].iov_len;
  return sum;
}

// A write into a staged file that took only r of its bytes (a regular file does that when
// its file system is full: staging on a tmpfs out of space) is done again whole on the
// real file, never handed to the application as a short write. Before the switch copies
// the staged file, the r bytes are taken back as the fd sees them: the file position
// moved back (a positional write needs nothing: the same bytes land at the same offset),
// or, on an O_APPEND fd, the file cut back. False if that fails: the short count stands.
bool undo_short_write(int fd, long long offset, ssize_t r) {
  if (offset >= 0 || r == 0) return true;
  int saved = errno;
  int fl = real::fcntl()(fd, F_GETFL);
  bool ok;
  if (fl >= 0 && (fl & O_APPEND)) {
    struct stat st {};
    ok = real::fstat()(fd, &st) == 0 && st.st_size >= r &&
         real::ftruncate()(fd, st.st_size - r) == 0;
  } else {
    ok = fl >= 0 && lseek(fd, -static_cast<off_t>(r), SEEK_CUR) >= 0;
  }
  errno = saved;
  return ok;
}

// offset < 0: at the file position (or appended). The writers/switching protocol is
// described at wait_for_switch (versions.h).
// redo_short: the bytes come from the caller's memory (the write, pwrite and writev
// families), so a short write can be done again whole (undo_short_write); not for
// kernel-side copies, whose source position moved, nor ftruncate.
template <class Op>
ssize_t tracked_write(int fd, Version* v, long long offset, size_t len, Op op,
                      bool redo_short = false) {
  v->writers.fetch_add(1);
  if (v->switching.load()) {
    v->writers.fetch_sub(1);
    wait_for_switch(v);
    return op();  // fd now writes the real file
  }
  if (v->budget >= 0 && v->owned.load() && exceeds_budget(fd, v, offset, len)) {
    v->writers.fetch_sub(1);
    switch_to_real(fd, v, "size budget reached");
    return op();
  }
  ssize_t r = op();
  v->writers.fetch_sub(1);
  if (r < 0 && errno == ENOSPC && v->owned.load() && !v->view) {
    if (switch_to_real(fd, v, "no space left in staging")) {
      r = op();
    } else {
      errno = ENOSPC;
    }
  } else if (redo_short && r >= 0 && static_cast<size_t>(r) < len && v->owned.load() && !v->view &&
             undo_short_write(fd, offset, r) && switch_to_real(fd, v, "no space left in staging")) {
    r = op();  // the whole write again, on the real file
  }
  return r;
}

// copy_file_range's fallback (below): n bytes from in to out, at the offsets given
// (advanced) or the file positions (moved), as the kernel copies: by sendfile(2), which
// copies between file systems in the kernel, when out is written at its position; else
// through a buffer. Returns the bytes copied, or -1 with errno when none were.
ssize_t copy_across_file_systems(int in, loff_t* in_off, int out, loff_t* out_off, size_t n) {
  if (!out_off) {
    size_t done = 0;
    ssize_t c = 0;
    while (done < n) {
      off_t pos = in_off ? static_cast<off_t>(*in_off) : 0;
      c = real::sendfile()(out, in, in_off ? &pos : nullptr, n - done);
      if (c < 0 && errno == EINTR) continue;
      if (c <= 0) break;
      if (in_off) *in_off = pos;
      done += static_cast<size_t>(c);
    }
    if (done > 0 || c == 0) return static_cast<ssize_t>(done);
    // Refused before a byte moved (an input sendfile cannot read): the buffer below.
  }
  constexpr size_t kBuf = 1 << 20;
  char* buf = static_cast<char*>(malloc(n < kBuf ? n : kBuf));
  if (!buf) {
    errno = ENOMEM;
    return -1;
  }
  size_t done = 0;
  int err = 0;
  while (done < n && !err) {
    const size_t want = n - done < kBuf ? n - done : kBuf;
    ssize_t got = in_off ? ::pread(in, buf, want, *in_off) : ::read(in, buf, want);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got < 0) err = errno;
      break;
    }
    ssize_t put = 0;
    while (put < got) {
      ssize_t w = out_off ? real::pwrite()(out, buf + put, static_cast<size_t>(got - put),
                                           static_cast<off_t>(*out_off + put))
                          : real::write()(out, buf + put, static_cast<size_t>(got - put));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        err = w < 0 ? errno : EIO;
        break;
      }
      put += w;
    }
    // Bytes read and not written are not copied: the input position goes back over them.
    if (put < got && !in_off) lseek(in, -static_cast<off_t>(got - put), SEEK_CUR);
    if (in_off) *in_off += put;
    if (out_off) *out_off += put;
    done += static_cast<size_t>(put);
  }
  free(buf);
  if (done == 0 && err) {
    errno = err;
    return -1;
  }
  return static_cast<ssize_t>(done);
}

// A staged file lives on the staging file system (/dev/shm), and the kernel refuses
// copy_file_range between two file systems (EXDEV) where the same call without the
// library, both files on one file system, copies: then copied another way
// (copy_across_file_systems), errno as it was before the call. staged: in or out is a
// staged file (an EXDEV between two files of the application's is its own).
ssize_t copy_range(int in, loff_t* in_off, int out, loff_t* out_off, size_t n, unsigned fl,
                   bool staged) {
  const int saved = errno;
  ssize_t r = real::copy_file_range()(in, in_off, out, out_off, n, fl);
  if (r >= 0 || errno != EXDEV || fl != 0 || !staged) return r;
  r = copy_across_file_systems(in, in_off, out, out_off, n);
  if (r >= 0) errno = saved;
  return r;
}

}  // namespace
}  // namespace ckptfwd::interpose

using namespace ckptfwd::interpose;

// start: where the written bytes began, evaluated after the call with r = bytes written
// (-1: they end at the file position; -2: at the end of the file). Recorded as extents for
// versions whose OPEN reply asked for them (shared across nodes, or a new file) and as
// dtype hints during typed MPI writes.
#define CKPTFWD_TRACKED_AS(fd, offset, len, call, start, redo_short)             \
  Version* v = g_fds.get(fd);                                                    \
  if (__builtin_expect(v == nullptr, 1) || t_busy) return call;                  \
  BlockedTimer blocked_timer(v);                                                 \
  ssize_t r = tracked_write(                                                     \
      fd, v, offset, len, [&]() -> decltype(call) { return call; }, redo_short); \
  if (r > 0 && wants_note(v)) {                                                  \
    Busy busy;                                                                   \
    note_written(fd, v, (start), r);                                             \
  }                                                                              \
  return r
// Bytes from the caller's memory (a short write is redone whole), and kernel-side copies.
#define CKPTFWD_TRACKED(fd, offset, len, call, start) \
  CKPTFWD_TRACKED_AS(fd, offset, len, call, start, true)
#define CKPTFWD_TRACKED_COPY(fd, offset, len, call, start) \
  CKPTFWD_TRACKED_AS(fd, offset, len, call, start, false)

CKPTFWD_EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  CKPTFWD_TRACKED(fd, -1, n, real::write()(fd, buf, n), -1);
}
CKPTFWD_EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  CKPTFWD_TRACKED(fd, off, n, real::pwrite()(fd, buf, n, off), off);
}
CKPTFWD_EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) {
  CKPTFWD_TRACKED(fd, off, n, real::pwrite64()(fd, buf, n, off), off);
}
CKPTFWD_EXPORT ssize_t writev(int fd, const struct iovec* iov, int cnt) {
  CKPTFWD_TRACKED(fd, -1, iov_bytes(iov, cnt), real::writev()(fd, iov, cnt), -1);
}
CKPTFWD_EXPORT ssize_t pwritev(int fd, const struct iovec* iov, int cnt, off_t off) {
  CKPTFWD_TRACKED(fd, off, iov_bytes(iov, cnt), real::pwritev()(fd, iov, cnt, off), off);
}
CKPTFWD_EXPORT ssize_t pwritev64(int fd, const struct iovec* iov, int cnt, off_t off) {
  CKPTFWD_TRACKED(fd, off, iov_bytes(iov, cnt), real::pwritev64()(fd, iov, cnt, off), off);
}
// offset -1 or RWF_APPEND: the write lands at the file position / end.
CKPTFWD_EXPORT ssize_t pwritev2(int fd, const struct iovec* iov, int cnt, off_t off, int fl) {
  CKPTFWD_TRACKED(fd, (fl & RWF_APPEND) ? -1 : off, iov_bytes(iov, cnt),
                  real::pwritev2()(fd, iov, cnt, off, fl), (fl & RWF_APPEND) ? -2 : off);
}
CKPTFWD_EXPORT ssize_t pwritev64v2(int fd, const struct iovec* iov, int cnt, off_t off, int fl) {
  CKPTFWD_TRACKED(fd, (fl & RWF_APPEND) ? -1 : off, iov_bytes(iov, cnt),
                  real::pwritev64v2()(fd, iov, cnt, off, fl), (fl & RWF_APPEND) ? -2 : off);
}

// Kernel-side copies into a tracked fd (cp uses copy_file_range) count as writes too; one
// from or to a staged file may need the buffer (copy_range).
CKPTFWD_EXPORT ssize_t copy_file_range(int in, loff_t* in_off, int out, loff_t* out_off, size_t n,
                                       unsigned fl) {
  const bool in_staged = g_fds.get(in) != nullptr, out_staged = g_fds.get(out) != nullptr;
  if (__builtin_expect(!out_staged, 1) && !t_busy) {
    if (__builtin_expect(!in_staged, 1)) {
      return real::copy_file_range()(in, in_off, out, out_off, n, fl);
    }
    return copy_range(in, in_off, out, out_off, n, fl, true);  // from a staged file or view
  }
  CKPTFWD_TRACKED_COPY(out, out_off ? static_cast<long long>(*out_off) : -1, n,
                       copy_range(in, in_off, out, out_off, n, fl, in_staged || out_staged),
                       out_off ? static_cast<long long>(*out_off) - r : -1);
}
CKPTFWD_EXPORT ssize_t sendfile(int out, int in, off_t* off, size_t n) {
  CKPTFWD_TRACKED_COPY(out, -1, n, real::sendfile()(out, in, off, n), -1);
}
CKPTFWD_EXPORT ssize_t sendfile64(int out, int in, off_t* off, size_t n) {
  CKPTFWD_TRACKED_COPY(out, -1, n, real::sendfile64()(out, in, off, n), -1);
}

// ftruncate may grow a staged file past its budget too (holes cost nothing on tmpfs, but
// the bytes behind them are what a later fallback copies).
#define CKPTFWD_FTRUNCATE(name)                                                                 \
  CKPTFWD_EXPORT int name(int fd, off_t len) {                                                  \
    Version* v = g_fds.get(fd);                                                                 \
    if (__builtin_expect(v == nullptr, 1) || t_busy || len < 0) return real::name()(fd, len);   \
    BlockedTimer blocked_timer(v);                                                              \
    return static_cast<int>(tracked_write(fd, v, 0, static_cast<size_t>(len),                   \
                                          [&]() -> ssize_t { return real::name()(fd, len); })); \
  }                                                                                             \
  static_assert(true, "a use of the macro ends with ';', so each keeps its own line")
CKPTFWD_FTRUNCATE(ftruncate);
CKPTFWD_FTRUNCATE(ftruncate64);

// POSIX AIO (ROMIO's non-blocking MPI_File_iwrite*): glibc's helper threads write with
// internal calls the library cannot see, so the data lands in the staged file unseen. A
// version that records extents records this one (and a typed MPI write its dtype hint)
// when the request is accepted (a request that later fails may leave it over-covered;
// ROMIO then reports the error anyway).
#define CKPTFWD_AIO_WRITE(name, cbtype)                                     \
  CKPTFWD_EXPORT int name(cbtype* cb) {                                     \
    int rc = real::name()(cb);                                              \
    if (rc != 0 || t_busy) return rc;                                       \
    Version* v = g_fds.get(cb->aio_fildes);                                 \
    if (__builtin_expect(v == nullptr, 1) || !wants_note(v)) return rc;     \
    Busy busy;                                                              \
    note_written(cb->aio_fildes, v, static_cast<long long>(cb->aio_offset), \
                 static_cast<long long>(cb->aio_nbytes));                   \
    return rc;                                                              \
  }                                                                         \
  static_assert(true, "a use of the macro ends with ';', so each keeps its own line")
CKPTFWD_AIO_WRITE(aio_write, struct aiocb);
CKPTFWD_AIO_WRITE(aio_write64, struct aiocb64);
