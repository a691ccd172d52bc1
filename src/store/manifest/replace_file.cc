#include "store/manifest/replace_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "store/manifest/manifest_record.h"

namespace ckptfwd {

bool replace_file_at(int dir_fd, const std::string& shown_dir, const std::string& name,
                     const std::string& text, std::string* err) {
  std::random_device rd;
  const std::string tmp = "." + name + "." + std::to_string(::getpid()) + "." +
                          manifest_record::hex64((static_cast<uint64_t>(rd()) << 32) | rd());
  int fd =
      ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  for (size_t off = 0; ok && off < text.size();) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) off += static_cast<size_t>(n);
  }
  if (ok) ok = ::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) == 0;
  if (!ok && err) *err = shown_dir + "/" + name + ": " + strerror(errno);
  if (fd >= 0) ::close(fd);
  if (!ok) ::unlinkat(dir_fd, tmp.c_str(), 0);
  return ok;
}

}  // namespace ckptfwd
