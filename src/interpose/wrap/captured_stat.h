// What the forwarder says of a captured path, as stat would report it (wrap_stat.cc), for
// the wrappers of other calls that must see captured files as the files they are.
#pragma once
#include <sys/stat.h>

namespace ckptfwd::interpose {

// 1: a captured file the forwarder knows (st filled, norm its captured name, PATH_MAX);
// 0: not one (the real file system answers); -1: the forwarder says the call fails (errno
// set). atflags: AT_SYMLINK_NOFOLLOW to describe a link itself (captured_path's follow).
// errno untouched unless -1.
int describe_captured(int dirfd, const char* path, int atflags, struct stat* st, char* norm);

}  // namespace ckptfwd::interpose
