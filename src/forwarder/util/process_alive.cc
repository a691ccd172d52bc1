#include "forwarder/util/process_alive.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "wire/proc_state.h"

namespace ckptfwd::fwd {

bool process_alive(long pid) {
  if (pid <= 0 || pid == static_cast<long>(getpid())) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  errno = 0;
  char state = proc_state::read_state(
      pid, [](const char* p, int f) { return ::open(p, f); }, ::close);
  // Unreadable: gone meanwhile (ENOENT), or no /proc (kill() said it exists).
  if (state == '?') return errno != ENOENT;
  return !proc_state::dead(state);
}

}  // namespace ckptfwd::fwd
