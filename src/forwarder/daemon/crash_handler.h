// Fatal signals (SEGV, BUS, ABRT, FPE, ILL): a libunwind backtrace and the stats go to the
// log with async-signal-safe writes, then the signal is re-raised with its default action
// (so a core dump / exit status still says what happened).
#pragma once

namespace ckptfwd::fwd {
struct Stats;
void install_crash_handler(const Stats* stats);
}  // namespace ckptfwd::fwd
