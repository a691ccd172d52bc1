#include "store/manifest/newer_real_file.h"

namespace ckptfwd {

bool stat_is_newer(const struct stat& st, int64_t version_mtime_ns, int64_t* file_mtime_ns) {
  if (version_mtime_ns <= 0 || !S_ISREG(st.st_mode)) return false;
  const int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (mtime <= version_mtime_ns) return false;
  if (file_mtime_ns) *file_mtime_ns = mtime;
  return true;
}

bool real_file_is_newer(const std::string& path, int64_t version_mtime_ns, int64_t* file_mtime_ns) {
  struct stat st;
  return version_mtime_ns > 0 && ::lstat(path.c_str(), &st) == 0 &&
         stat_is_newer(st, version_mtime_ns, file_mtime_ns);
}

}  // namespace ckptfwd
