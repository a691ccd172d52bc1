#include "interpose/client/notices.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "interpose/setup/state.h"
#include "interpose/track/activity_clock.h"
#include "interpose/wrap/real.h"
#include "wire/notices.h"

namespace ckptfwd::interpose {
namespace {

// The notices file's length up to which this process printed.
std::atomic<uint64_t> g_seen{0};

activity::Word* notices_word(void* base) {
  return base ? activity::word_at(base, activity::kNoticesOffset) : nullptr;
}

// The notices file of this session, if it is a regular file of this user's; -1 otherwise.
int open_notices() {
  char path[PATH_MAX];
  int n = snprintf(path, sizeof(path), "%s/%s", g_settings.session.dir, wire::kNoticesFile);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(path)) return -1;
  int fd = real::open()(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && (real::fstat()(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
    real::close()(fd);
    fd = -1;
  }
  return fd;
}

// Prints the lines of fd in [from, to): "ckptfwd: " and the line, control bytes as '?'.
// A line longer than kMaxNoticeLine (not the forwarder's) comes out in pieces of that many.
void print_lines(int fd, uint64_t from, uint64_t to) {
  char line[sizeof("ckptfwd: ") + wire::kMaxNoticeLine];
  const size_t prefix = sizeof("ckptfwd: ") - 1;
  memcpy(line, "ckptfwd: ", prefix);
  while (from < to) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(to - from, wire::kMaxNoticeLine));
    ssize_t got = pread(fd, line + prefix, want, static_cast<off_t>(from));
    if (got <= 0) return;
    char* body = line + prefix;
    char* nl = static_cast<char*>(memchr(body, '\n', static_cast<size_t>(got)));
    size_t len = nl ? static_cast<size_t>(nl - body) : static_cast<size_t>(got);
    for (size_t i = 0; i < len; ++i)
      if (static_cast<unsigned char>(body[i]) < 0x20 || body[i] == 0x7f) body[i] = '?';
    body[len] = '\n';
    ssize_t w = real::write()(2, line, prefix + len + 1);
    (void)w;
    from += len + (nl ? 1 : 0);
  }
}

}  // namespace

void notices_from_start() { g_seen.store(0); }

void print_new_notices() {
  activity::Word* w = notices_word(g_activity_page.load(std::memory_order_acquire));
  if (!w) return;
  // A stderr the application closed and whose number a captured file took: not written to.
  if (g_fds.get(2)) return;
  uint64_t end = w->load(std::memory_order_acquire);
  uint64_t seen = g_seen.load(std::memory_order_relaxed);
  // (one thread prints a range; a page that went backwards is a new forwarder's, whose
  // mapping notices_from_start handles)
  if (end <= seen || !g_seen.compare_exchange_strong(seen, end)) return;
  int saved = errno;
  int fd = open_notices();
  if (fd >= 0) {
    print_lines(fd, seen, end);
    real::close()(fd);
  }
  errno = saved;
}

}  // namespace ckptfwd::interpose
