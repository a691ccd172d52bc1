// chdir/fchdir: the real call, then the library's copy of the working directory
// (interpose/setup/cwd_cache.h) follows it, so relative paths are resolved without getcwd.
#include <unistd.h>

#include "interpose/setup/cwd_cache.h"
#include "interpose/setup/state.h"
#include "interpose/wrap/real.h"

using namespace ckptfwd::interpose;

namespace {
int after_chdir(int rc) {
  if (rc != 0) return rc;
  // A vfork child changes only its own directory, but writes our memory; a chdir made
  // while the library is busy (a signal handler inside a wrapped call) must not refresh
  // under it: distrust the copy (paths then resolve the old way, through getcwd).
  if (owner_process() && !t_busy)
    cwd_refresh();
  else
    cwd_distrust();
  return rc;
}
}  // namespace

CKPTFWD_EXPORT int chdir(const char* path) { return after_chdir(real::chdir()(path)); }
CKPTFWD_EXPORT int fchdir(int fd) { return after_chdir(real::fchdir()(fd)); }
