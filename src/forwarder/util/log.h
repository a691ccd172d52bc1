// Forwarder log. Lines
//   ckptfwd-forwarder: <UTC time, ms> node=<node> job=<job> pid=<pid> <level>: <message>
// go to CKPTFWD_LOG (a file path, "stderr" or "syslog"); the daemon picks a file in the
// store when it is unset (daemon/log_place.h). Filtered by CKPTFWD_LOG_LEVEL. Warnings
// repeated from one call site (one per file, say) are collapsed: a few a minute are written
// and the rest counted (log_repeats.h); at level debug every line is written. Errors are
// always written: each may name a file a user must know about.
#pragma once
#include <string>

namespace ckptfwd::fwd {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

// Opens the destination. Safe to call again (tests); falls back to stderr when the file
// cannot be opened (and says so there).
void log_init(const std::string& dest, const std::string& level);
// The node and job every line names (unset: "-").
void log_set_identity(const std::string& node, const std::string& job);
// Where lines go: the file log_init opened, else "stderr" or "syslog".
std::string log_destination();
// ". Log: <file>" (or "syslog") for a message that sends the reader to the log; "" when the
// log is the forwarder's stderr, which a detached forwarder does not have.
std::string log_pointer();
// The fd log lines go to (for the crash handler's async-signal-safe writes).
int log_fd();
bool log_enabled(LogLevel l);
void log_msg(LogLevel l, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// Says how many collapsed lines were not written (the forwarder's exit).
void log_flush_repeats();

#define FWD_LOG(level, ...)                                                              \
  do {                                                                                   \
    if (::ckptfwd::fwd::log_enabled(level)) ::ckptfwd::fwd::log_msg(level, __VA_ARGS__); \
  } while (0)
#define LOG_ERROR(...) FWD_LOG(::ckptfwd::fwd::LogLevel::kError, __VA_ARGS__)
#define LOG_WARN(...) FWD_LOG(::ckptfwd::fwd::LogLevel::kWarn, __VA_ARGS__)
#define LOG_INFO(...) FWD_LOG(::ckptfwd::fwd::LogLevel::kInfo, __VA_ARGS__)
#define LOG_DEBUG(...) FWD_LOG(::ckptfwd::fwd::LogLevel::kDebug, __VA_ARGS__)

}  // namespace ckptfwd::fwd
