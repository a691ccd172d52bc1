#include "forwarder/util/kill_point.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "forwarder/util/log.h"

namespace ckptfwd::fwd {

void kill_point(const std::string& session_dir, const char* step) {
  static const char* armed = getenv("CKPTFWD_TEST_KILL_AT");
  if (!armed || strcmp(armed, step) != 0) return;
  std::string marker = session_dir + "/test-killed-" + step;
  int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;  // fired already in this session
  ::close(fd);
  LOG_WARN("CKPTFWD_TEST_KILL_AT=%s: killing myself (test fault injection)", step);
  raise(SIGKILL);
}

}  // namespace ckptfwd::fwd
