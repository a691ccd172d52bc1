#include "stats_watch.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>

#include "cli.h"

namespace ckptfwd::cli {

namespace {

volatile sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }

// SIGINT and SIGTERM end the watch between frames; no SA_RESTART, so a sleep or a
// request in progress returns at once.
struct StopSignals {
  struct sigaction old_int {
  }, old_term{};
  StopSignals() {
    g_stop = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  }
};

// Sleeps s seconds unless stopped meanwhile.
void pause_for(double s) {
  timespec left;
  left.tv_sec = static_cast<time_t>(s);
  left.tv_nsec = static_cast<long>((s - std::floor(s)) * 1e9);
  while (!g_stop && nanosleep(&left, &left) != 0) {
  }
}

std::string clock_now() {
  time_t t = time(nullptr);
  struct tm tm;
  char b[32];
  if (!localtime_r(&t, &tm) || !strftime(b, sizeof b, "%H:%M:%S", &tm)) return "?";
  return b;
}

}  // namespace

int watch_frames(const WatchOptions& opt, const FrameFn& frame) {
  StopSignals stop;
  bool tty = isatty(STDOUT_FILENO);
  char every[32];
  snprintf(every, sizeof every, "%g s", opt.interval_s);
  for (long n = 0; !g_stop && (opt.count == 0 || n < opt.count); ++n) {
    if (n > 0) pause_for(opt.interval_s);
    if (g_stop) break;
    std::string text, err;
    if (!frame(&text, &err)) {
      if (g_stop) break;  // Ctrl-C while the forwarder was being asked
      if (tty) fputs("\n", stdout);
      error("stats --watch: " + err);
      return 1;
    }
    if (opt.json) {
      fputs(text.c_str(), stdout);
    } else if (tty) {
      // Home and clear, then the frame: a live table that redraws in place.
      printf("\033[H\033[2J%s   every %s, %s   (Ctrl-C to stop)\n\n%s", opt.title.c_str(), every,
             clock_now().c_str(), text.c_str());
    } else {
      printf("%s--- %s (%s, every %s)\n%s", n > 0 ? "\n" : "", clock_now().c_str(),
             opt.title.c_str(), every, text.c_str());
    }
    fflush(stdout);
  }
  return 0;
}

}  // namespace ckptfwd::cli
