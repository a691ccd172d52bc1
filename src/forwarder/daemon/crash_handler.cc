#define UNW_LOCAL_ONLY
#include "forwarder/daemon/crash_handler.h"

#include <libunwind.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "forwarder/state/stats.h"
#include "forwarder/util/log.h"

namespace ckptfwd::fwd {

namespace {
const Stats* g_stats = nullptr;
char g_altstack[64 * 1024];

void put(int fd, const char* s) {
  ssize_t w = write(fd, s, strlen(s));
  (void)w;
}

void put_hex(int fd, uint64_t v) {
  char buf[19] = "0x";
  for (int i = 0; i < 16; ++i) buf[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 15];
  buf[18] = '\0';
  put(fd, buf);
}

void on_fatal(int sig) {
  int fd = log_fd();
  put(fd, "ckptfwd-forwarder: error: fatal signal ");
  put(fd, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
  put(fd, ", backtrace:\n");
  unw_context_t ctx;
  unw_cursor_t cur;
  if (unw_getcontext(&ctx) == 0 && unw_init_local(&cur, &ctx) == 0) {
    for (int depth = 0; depth < 64 && unw_step(&cur) > 0; ++depth) {
      unw_word_t ip = 0, off = 0;
      unw_get_reg(&cur, UNW_REG_IP, &ip);
      char name[256];
      put(fd, "ckptfwd-forwarder:   ");
      put_hex(fd, ip);
      if (unw_get_proc_name(&cur, name, sizeof(name), &off) == 0) {
        put(fd, " ");
        put(fd, name);
        put(fd, "+");
        put_hex(fd, off);
      }
      put(fd, "\n");
    }
  }
  if (g_stats) {
    char json[2048];
    size_t n = g_stats->format_json(json, sizeof(json));
    if (n) {
      put(fd, "ckptfwd-forwarder: error: stats at crash: ");
      put(fd, json);
      put(fd, "\n");
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);
}
}  // namespace

void install_crash_handler(const Stats* stats) {
  g_stats = stats;
  // An alternate stack so a stack overflow still gets its backtrace.
  stack_t ss{};
  ss.ss_sp = g_altstack;
  ss.ss_size = sizeof(g_altstack);
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = on_fatal;
  sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) sigaction(sig, &sa, nullptr);
}

}  // namespace ckptfwd::fwd
