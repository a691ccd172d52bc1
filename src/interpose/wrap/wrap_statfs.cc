// statfs/statvfs of a captured path describe the file system the bytes really go to (the
// staging area). ROMIO picks its ADIO driver from statfs: on a cluster whose ROMIO has a
// Lustre or GPFS driver, the PFS answer would send driver-specific calls to a staged tmpfs
// file; the staging file system makes it choose the generic UFS driver. Applications that
// check free space before a checkpoint see the space the checkpoint will use first.
// glibc's statvfs calls its internal statfs, so it is wrapped separately.
#include <errno.h>
#include <fcntl.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "interpose/setup/state.h"
#include "interpose/wrap/real.h"

using namespace ckptfwd::interpose;

namespace {

// The directory whose file system describes a captured path: the session's staging root.
const char* staging_root_for(const char* path) {
  char norm[PATH_MAX];
  if (!intercepting() || !g_settings.session_ok || !captured_path(AT_FDCWD, path, norm))
    return nullptr;
  return g_settings.session.stage_root;
}

}  // namespace

#define CKPTFWD_STATFS_WRAPPER(name, buf_t)                      \
  CKPTFWD_EXPORT int name(const char* path, struct buf_t* buf) { \
    const char* root = staging_root_for(path);                   \
    return real::name()(root ? root : path, buf);                \
  }

CKPTFWD_STATFS_WRAPPER(statfs, statfs)
CKPTFWD_STATFS_WRAPPER(statfs64, statfs64)
CKPTFWD_STATFS_WRAPPER(statvfs, statvfs)
CKPTFWD_STATFS_WRAPPER(statvfs64, statvfs64)
