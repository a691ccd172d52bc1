// --daemon: detach from the caller and report readiness through a pipe, so the library
// that started us knows the socket accepts connections when `ckptfwd-forwarder --daemon`
// returns (exit 0), or gets the reason on stderr (exit 1).
//
// Descriptors: the forwarder runs inside someone else's environment (the dynamic loader
// may hold a descriptor for LD_DEBUG_OUTPUT, a job script may pass its own). Start-up
// never dup2s onto or closes a descriptor above 2 that it did not open itself; the
// readiness pipe keeps the number pipe2 gave it and travels as a value, never as an
// assumed fixed number. 0, 1 and 2 are the standard streams every daemon redirects.
#pragma once
#include <string>

namespace ckptfwd::fwd {

// In the caller: waits for the daemon's readiness message and exits (never returns).
// A message it cannot read (empty, or bytes someone else wrote into the pipe) is not
// taken as a failure while a forwarder answers HELLO on socket_path: exit 0 then.
// In the daemon (one fork: the caller's exit leaves it to init or the job's subreaper; a
// process group of its own in the caller's session, or a session of its own when the
// caller is an MPI rank; SIGHUP ignored): returns the write end of the readiness pipe
// (close-on-exec, whatever number it has); stdin is /dev/null, stdout/stderr go to
// log_file when it is a file path, else to /dev/null.
// With an election_fd (a library's early start through ckptfwd-launch, CKPTFWD_ELECTION_FD):
// the launcher forked this process and exited, so nobody waits for it: no fork, the same
// detaching in place, and -1 (no readiness to report). The caller holds the election lock
// until the forwarder listens, then closes it, so processes that look for the forwarder
// meanwhile wait for it to listen instead of starting another.
int daemonize(const std::string& log_file, const std::string& socket_path, int election_fd = -1);
// Sends "OK" or the failure reason; closes fd. No-op for fd < 0.
void signal_ready(int fd, bool ok, const std::string& why);
// True if a forwarder accepts a connection on socket_path and answers HELLO with OK.
bool forwarder_answers(const std::string& socket_path);

}  // namespace ckptfwd::fwd
