#include "h5_out.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "schema/hdf5_client.h"

extern char** environ;

namespace ckptfwd::cli {

bool write_h5(const std::string& out, const Json& datasets, const std::string& spec_near,
              std::string* err) {
  const std::string helper = schema::default_helper("ckptfwd-h5export");
  if (access(helper.c_str(), X_OK) != 0) {
    *err = "writing " + out + " needs " + helper +
           ", built only where a serial HDF5 library was found (libhdf5-dev); export to .npy";
    return false;
  }
  std::string spec = spec_near + ".spec.XXXXXX";
  const int fd = mkstemp(spec.data());
  if (fd < 0) {
    *err = "cannot create " + spec + ": " + strerror(errno);
    return false;
  }
  const std::string text = json_text(Json{{"out", out}, {"datasets", datasets}});
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!written) {
    *err = "cannot write " + spec + ": " + strerror(errno);
    unlink(spec.c_str());
    return false;
  }
  char* argv[] = {const_cast<char*>(helper.c_str()), spec.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, helper.c_str(), nullptr, nullptr, argv, environ);
  int status = 0;
  if (rc == 0)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  unlink(spec.c_str());
  if (rc != 0) {
    *err = "cannot run " + helper + ": " + strerror(rc);
    return false;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *err = helper + (WIFEXITED(status) ? " failed (above)" : " was killed") + "; " + out +
           " not written";
    return false;
  }
  return true;
}

}  // namespace ckptfwd::cli
