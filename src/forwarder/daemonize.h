// --daemon: detach from the caller and report readiness through a pipe, so the library
// that started us knows the socket accepts connections when `ckptfwd-forwarder --daemon`
// returns (exit 0), or gets the reason on stderr (exit 1).
#pragma once
#include <string>

namespace ckptfwd::fwd {

// In the caller: waits for the daemon's readiness message and exits (never returns).
// In the daemon (fork, setsid, fork): returns the write end of the readiness pipe (fd 3,
// the only fd above 2 left open); stdin is /dev/null, stdout/stderr go to log_file when
// it is a file path, else to /dev/null.
int daemonize(const std::string& log_file);
// Sends "OK" or the failure reason; closes fd. No-op for fd < 0.
void signal_ready(int fd, bool ok, const std::string& why);

}  // namespace ckptfwd::fwd
