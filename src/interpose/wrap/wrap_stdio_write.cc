// fwrite, fputs and their _unlocked forms on a captured stream.
//
// glibc flushes a stream's buffer with internal write calls the write wrappers never see,
// so a stream could grow its staged file past the budget, or until staging is full. What
// the library does see is the call that hands bytes to the stream: fwrite and fputs (and
// their _unlocked forms) check first, and if the bytes would not fit they switch the fd
// to the real path (switch_to_real) before the real call, as write() does. The FILE keeps
// its fd number and its buffer; switch_to_real keeps the file position, so bytes still
// pending in the buffer land in the real file when glibc flushes them. (Flushing them into
// staging before the switch would push up to one more buffer into the space that is
// running out.)
//
// The checks are made ahead, generously, because an ENOSPC cannot be recovered after the
// fact: a failed flush drops the buffered bytes inside glibc (it resets the buffer however
// much was written) and the library cannot redo a write it never saw. The application then
// sees the error from fwrite/fclose, as on a full disk, and the library logs it.
//
// Not wrapped: fputc/putc (a wrapper on a one-byte call would slow every stream of the
// process, captured or not), the printf family (the length is unknown until formatted)
// and the inline putc_unlocked that <bits/stdio.h> makes of small constant-size
// fwrite_unlocked calls. Their bytes are not checked by themselves: the next fwrite/fputs
// that flushes sees them (the stream position includes them), the slack below leaves room
// for a buffer of them, and fclose/freopen check the last flush; but a stream written only
// with them can outgrow the budget (it then switches at fclose) or fill staging (ENOSPC).
#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <atomic>

#include "interpose/setup/state.h"
#include "interpose/track/blocked_time.h"
#include "interpose/track/versions.h"
#include "interpose/wrap/real.h"
#include "interpose/wrap/stdio_write.h"

using namespace ckptfwd::interpose;

namespace {

// Room kept in reserve: one stream buffer, at least BUFSIZ. The checks run only when a
// call writes to the fd; bytes a call leaves in the buffer (fewer than one buffer) may then
// be flushed unseen by fflush, fseek or exit, or come from fputc/fprintf.
size_t stream_slack(FILE* f) {
  size_t b = __fbufsize(f);
  return b > BUFSIZ ? b : BUFSIZ;
}

// a + b and a * b, saturating: a huge fwrite must not wrap around into "fits".
unsigned long long sat_add(unsigned long long a, unsigned long long b) {
  unsigned long long r;
  return __builtin_add_overflow(a, b, &r) ? ~0ULL : r;
}
size_t mul_sat(size_t a, size_t b) {
  size_t r;
  return __builtin_mul_overflow(a, b, &r) ? ~size_t{0} : r;
}

// True if handing len bytes to f may write to its fd now: they do not fit the buffer
// with what is pending, or it is unbuffered, line buffered or not yet allocated. Bytes
// that stay buffered are checked by the call that flushes them (or by fclose), so a stream
// of small fwrites pays the checks once per buffer, and otherwise only these three reads
// of the FILE.
bool stream_flushes(FILE* f, size_t len) {
  size_t buf = __fbufsize(f);
  unsigned long long out = sat_add(__fpending(f), len);
  return out != 0 && !(buf > 1 && !__flbf(f) && out <= buf);
}

// True if len more bytes handed to f would take its staged file past v->budget, less
// slack. ftello is the stream's logical position: it includes the bytes pending in the
// buffer. Overwriting inside the staged file's current size does not grow it.
bool stream_over_budget(int fd, FILE* f, const Version* v, size_t len, size_t slack) {
  if (v->budget < 0) return false;
  off_t pos = ftello(f);
  if (pos < 0) return false;
  unsigned long long end = sat_add(static_cast<unsigned long long>(pos), len);
  if (sat_add(end, slack) <= static_cast<unsigned long long>(v->budget)) return false;
  struct stat st {};
  return real::fstat()(fd, &st) != 0 || end > static_cast<unsigned long long>(st.st_size);
}

// True if the file system of staging has no room for the pending bytes and len, plus
// slack. The budget is the forwarder's estimate at OPEN; this catches staging filling up
// anyway (no limit set, other files growing meanwhile).
bool stream_short_of_space(int fd, FILE* f, size_t len, size_t slack) {
  struct statfs sf {};
  if (fstatfs(fd, &sf) != 0 || sf.f_blocks == 0) return false;  // no usable figures
  unsigned long long room = static_cast<unsigned long long>(sf.f_bavail) * sf.f_bsize;
  return room < sat_add(sat_add(__fpending(f), len), slack);
}

// Why f cannot take len more bytes in staging, or nullptr if it can. final: fclose's last
// flush, after which nothing more comes, so the budget is checked exactly.
const char* stream_outgrows_staging(int fd, FILE* f, const Version* v, size_t len,
                                    bool final = false) {
  if (!v->owned.load() || v->view) return nullptr;  // a forked child's: the parent's call
  Busy busy;  // ftello may lseek; nothing here may land in a wrapper
  ErrnoKeeper keep;
  size_t slack = stream_slack(f);
  if (stream_over_budget(fd, f, v, len, final ? 0 : slack)) return "size budget reached";
  if (stream_short_of_space(fd, f, len, slack)) return "no space left in staging";
  return nullptr;
}

// An ENOSPC the checks did not foresee: glibc has dropped buffered bytes (see above).
void note_stream_enospc(FILE* f, const Version* v) {
  if (errno != ENOSPC || !ferror_unlocked(f) || !v->owned.load() || v->view) return;
  static std::atomic<bool> logged{false};
  ErrnoKeeper keep;
  if (!logged.exchange(true))
    log_msg(
        "ERROR: staging ran out of space under a stdio write to %s; bytes buffered in "
        "the C library are lost and the application sees the error",
        v->path);
}

// fwrite/fputs of len bytes into f, whose fd is tracked as v. lock: hold the stream's
// lock throughout (not for the _unlocked forms), so no other thread's stdio call flushes
// into staging while switch_to_real copies it. The call counts as a writer of v
// (wait_for_switch, versions.h), so a switch started from another fd waits for its flush.
template <class Op>
auto stream_write(int fd, FILE* f, Version* v, size_t len, bool lock, Op op) -> decltype(op()) {
  if (lock) flockfile(f);
  if (!stream_flushes(f, len)) {  // the bytes stay in the buffer: the call touches no fd
    auto r = op();
    if (lock) funlockfile(f);
    return r;
  }
  BlockedTimer blocked_timer(v);  // a call that writes to the fd (a flush) is timed
  v->writers.fetch_add(1);
  bool counted = true;
  if (v->switching.load()) {
    v->writers.fetch_sub(1);
    counted = false;
    wait_for_switch(v);  // fd now writes the real file
  } else if (const char* why = stream_outgrows_staging(fd, f, v, len)) {
    v->writers.fetch_sub(1);
    counted = false;
    switch_to_real(fd, v, why);  // if it cannot, it logs and the bytes go to staging
  }
  auto r = op();
  if (counted) {
    v->writers.fetch_sub(1);
    note_stream_enospc(f, v);
  }
  if (lock) funlockfile(f);
  return r;
}

}  // namespace

namespace ckptfwd::interpose {
void final_flush_check(int fd, FILE* f, Version* v) {
  if (__fpending(f) == 0) return;
  if (const char* why = stream_outgrows_staging(fd, f, v, 0, true)) switch_to_real(fd, v, why);
}
}  // namespace ckptfwd::interpose

// One fileno and one table load for an untracked stream (fileno is -1 without an fd:
// fmemopen, open_memstream, fopencookie).
#define CKPTFWD_STREAM_WRITE(f, len, lock, call)                \
  int fd = stream_fd(f);                                        \
  Version* v = g_fds.get(fd);                                   \
  if (__builtin_expect(v == nullptr, 1) || t_busy) return call; \
  return stream_write(fd, f, v, (len), lock, [&]() -> decltype(call) { return call; })

CKPTFWD_EXPORT size_t fwrite(const void* p, size_t size, size_t n, FILE* f) {
  CKPTFWD_STREAM_WRITE(f, mul_sat(size, n), true, real::fwrite()(p, size, n, f));
}
CKPTFWD_EXPORT size_t fwrite_unlocked(const void* p, size_t size, size_t n, FILE* f) {
  CKPTFWD_STREAM_WRITE(f, mul_sat(size, n), false, real::fwrite_unlocked()(p, size, n, f));
}
CKPTFWD_EXPORT int fputs(const char* s, FILE* f) {
  CKPTFWD_STREAM_WRITE(f, strlen(s), true, real::fputs()(s, f));
}
CKPTFWD_EXPORT int fputs_unlocked(const char* s, FILE* f) {
  CKPTFWD_STREAM_WRITE(f, strlen(s), false, real::fputs_unlocked()(s, f));
}
