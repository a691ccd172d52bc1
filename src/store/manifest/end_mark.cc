// The MANIFEST's end mark (end_mark.h).
#include "store/manifest/end_mark.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/xattr.h>

#include <cinttypes>
#include <cstdio>

namespace ckptfwd::manifest {

void set_end_mark(int fd, uint64_t size) {
  char v[32];
  int n = snprintf(v, sizeof(v), "%" PRIu64, size);
  if (n > 0) ::fsetxattr(fd, kEndMarkXattr, v, static_cast<size_t>(n), 0);
}

uint64_t end_mark(const std::string& store_dir) {
  char v[64] = {};
  const std::string path = store_dir + "/MANIFEST";
  ssize_t n = ::lgetxattr(path.c_str(), kEndMarkXattr, v, sizeof(v) - 1);
  if (n <= 0) return 0;
  unsigned long long size = 0;
  return sscanf(v, "%llu", &size) == 1 ? size : 0;
}

bool view_may_lag(const std::string& dir) {
  // statfs f_type values (linux/magic.h).
  constexpr long kFuse = 0x65735546, kNfs = 0x6969, kSmb = 0x517B, kV9fs = 0x01021997;
  constexpr long kCifs = static_cast<long>(0xFF534D42), kSmb2 = static_cast<long>(0xFE534D42);
  struct statfs fs {};
  if (::statfs(dir.c_str(), &fs) != 0) return false;
  const long t = static_cast<long>(fs.f_type);
  return t == kFuse || t == kNfs || t == kSmb || t == kV9fs || t == kCifs || t == kSmb2;
}

void refresh_attributes(int fd) {
  struct statx sx;
  ::statx(fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_SIZE | STATX_MTIME, &sx);
}

}  // namespace ckptfwd::manifest
