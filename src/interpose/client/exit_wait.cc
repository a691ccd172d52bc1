#include "interpose/client/exit_wait.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/monotonic.h"
#include "interpose/client/client.h"
#include "interpose/setup/state.h"

namespace ckptfwd::interpose {
namespace {

constexpr long kFirstDelayMs = 50;
constexpr long kMaxDelayMs = 2000;

void sleep_for_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

}  // namespace

bool wait_for_commits_at_exit() {
  const int64_t budget_ns = static_cast<int64_t>(g_settings.exit_retry_s) * 1000000000LL;
  const int64_t began = monotonic_ns();
  long delay_ms = kFirstDelayMs;
  bool told = false;
  for (;;) {
    const char* req[] = {wire::kWaitAll};
    Result r = call(req, 1);
    if (r.status == Status::kOk || r.status == Status::kPass) {
      if (told)
        log_msg("checkpoint files of pid %d are committed to the store after all",
                static_cast<int>(getpid()));
      return true;
    }
    const int64_t spent = monotonic_ns() - began;
    const bool refused = client_refused();
    if (refused || spent >= budget_ns) {
      if (r.status == Status::kErr)
        log_msg(
            "ERROR: checkpoint files of pid %d are NOT committed to the store: %s (tried "
            "for %ld s, CKPTFWD_EXIT_RETRY_S; the forwarder's log names the store and "
            "why: CKPTFWD_LOG, by default <store>/logs/<job>.<node>.log). They stay staged "
            "in %s; `CKPTFWD_JOB_ID=%s ckptfwd drain` on this node commits them once "
            "the store takes them and exits non-zero until then",
            static_cast<int>(getpid()), strerror(r.err), static_cast<long>(spent / 1000000000),
            g_settings.session.dir, g_settings.session.job);
      else
        log_msg(
            "ERROR: checkpoint files of pid %d are NOT committed to the store: the "
            "forwarder is gone (%s)%s. They stay staged in %s; `CKPTFWD_JOB_ID=%s ckptfwd "
            "drain` on this node starts a forwarder that commits them, and exits non-zero "
            "until it has",
            static_cast<int>(getpid()), unreachable_reason(),
            refused ? "" : " and could not be started again within CKPTFWD_EXIT_RETRY_S",
            g_settings.session.dir, g_settings.session.job);
      return false;
    }
    if (!told) {
      log_msg(
          "checkpoint files of pid %d are not committed yet (%s); retrying for up to %d s "
          "(CKPTFWD_EXIT_RETRY_S)",
          static_cast<int>(getpid()),
          r.status == Status::kErr ? strerror(r.err) : "the forwarder is gone",
          g_settings.exit_retry_s);
      told = true;
    }
    // A forwarder lost again: the next call finds the one another process started, or
    // starts one itself (its recovery takes over this process's staged versions).
    if (r.status == Status::kUnreachable) client_forget_unreachable();
    const int64_t left_ms = (budget_ns - spent) / 1000000;
    sleep_for_ms(delay_ms < left_ms ? delay_ms : (left_ms > 0 ? left_ms : 1));
    delay_ms = delay_ms * 2 > kMaxDelayMs ? kMaxDelayMs : delay_ms * 2;
  }
}

}  // namespace ckptfwd::interpose
