#include "stats_watch.h"

#include <signal.h>
#include <sys/ioctl.h>
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

std::string fit_terminal(const std::string& text, int rows, int cols) {
  if (rows <= 2 || cols <= 0) return text;
  std::string out;
  int used = 0;
  size_t lines = 0, shown = 0;
  for (size_t b = 0, e; b < text.size(); b = e + 1, ++lines) {
    e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    int need = 1 + static_cast<int>((e > b ? e - b - 1 : 0) / static_cast<size_t>(cols));
    if (shown < lines || used + need > rows - 1) continue;  // only counted from here on
    out.append(text, b, e - b + 1);
    used += need;
    ++shown;
  }
  if (lines - shown == 1) out += "(1 more line: a taller terminal shows it)\n";
  if (lines - shown > 1)
    out += "(" + std::to_string(lines - shown) + " more lines: a taller terminal shows them)\n";
  return out;
}

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
      struct winsize ws {};
      int rows = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_row : 0;
      int cols = rows ? ws.ws_col : 0;
      printf("\033[H\033[2J%s   every %s, %s   (Ctrl-C to stop)\n\n%s", opt.title.c_str(), every,
             clock_now().c_str(), fit_terminal(text, rows - 2, cols).c_str());
    } else {
      printf("%s--- %s (%s, every %s)\n%s", n > 0 ? "\n" : "", clock_now().c_str(),
             opt.title.c_str(), every, text.c_str());
    }
    fflush(stdout);
  }
  return 0;
}

}  // namespace ckptfwd::cli
