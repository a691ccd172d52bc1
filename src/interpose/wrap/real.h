// The next (libc) definition of every wrapped symbol, resolved lazily with
// dlsym(RTLD_NEXT) and cached in an atomic. Inside the library always call through
// real::name() — calling open() directly would land in our own wrapper again.
#pragma once
#include <aio.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/xattr.h>

namespace ckptfwd::interpose::real {

#define REAL(ret, name, params)    \
  using name##_fn = ret(*) params; \
  name##_fn name();
#include "interpose/real_calls.def"
#undef REAL

// Resolves every entry now (called once at init so later calls are one atomic load).
void resolve_all();

}  // namespace ckptfwd::interpose::real
