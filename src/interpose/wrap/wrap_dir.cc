// Directory listings show captured files: at opendir of a directory that can hold them
// the forwarder is asked for their names (LIST); once the real readdir is exhausted the
// names that do not exist as real files are returned as synthesized regular files.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <atomic>

#include "interpose/client/client.h"
#include "interpose/setup/state.h"
#include "interpose/wrap/captured_stat.h"
#include "interpose/wrap/real.h"

using namespace ckptfwd::interpose;
namespace wire = ckptfwd::wire;

static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "LP64 dirent layout");

namespace {

struct DirExtra {
  DIR* dir = nullptr;
  char* names = nullptr;  // NUL-separated
  size_t bytes = 0;
  size_t cursor = 0;  // offset of the next name to consider
  char path[PATH_MAX] = {};
  struct dirent64 ent {};
  DirExtra* next = nullptr;
};

pthread_mutex_t g_dir_mu = PTHREAD_MUTEX_INITIALIZER;
DirExtra* g_dirs = nullptr;
std::atomic<int> g_ndirs{0};

DirExtra* find_locked(DIR* d) {
  for (DirExtra* e = g_dirs; e; e = e->next)
    if (e->dir == d) return e;
  return nullptr;
}

// Asks for the captured names of dir (normalised) and attaches them to d.
void attach_listing(DIR* d, const char* norm) {
  if (!g_capture.dir_may_hold(norm)) return;
  Busy busy;
  DirExtra* x = static_cast<DirExtra*>(calloc(1, sizeof(DirExtra)));
  if (!x) return;
  const char* req[] = {wire::kList, norm};
  auto take = [x](const wire::Fields&) {
    const char* data;
    size_t len;
    reply_payload(&data, &len);       // every name, however many (Fields keeps only 64)
    size_t first = strlen(data) + 1;  // skip "OK"
    if (first >= len) return;
    x->bytes = len - first + 1;  // the payload's last name has its NUL at data[len]
    x->names = static_cast<char*>(malloc(x->bytes));
    if (!x->names) {
      x->bytes = 0;
      return;
    }
    memcpy(x->names, data + first, x->bytes);
  };
  if (call_with(req, 2, take).status != Status::kOk || x->bytes == 0) {
    free(x->names);
    free(x);
    return;
  }
  x->dir = d;
  strcpy(x->path, norm);
  pthread_mutex_lock(&g_dir_mu);
  x->next = g_dirs;
  g_dirs = x;
  g_ndirs.fetch_add(1);
  pthread_mutex_unlock(&g_dir_mu);
}

// The next captured name of d that is not also a real entry, or nullptr.
struct dirent64* next_synthesized(DIR* d) {
  pthread_mutex_lock(&g_dir_mu);
  DirExtra* x = find_locked(d);
  struct dirent64* out = nullptr;
  while (x && x->cursor < x->bytes && !out) {
    const char* name = x->names + x->cursor;
    x->cursor += strlen(name) + 1;
    size_t len = strlen(name);
    if (len == 0 || len >= sizeof(x->ent.d_name) || strchr(name, '/') || strcmp(name, ".") == 0 ||
        strcmp(name, "..") == 0)
      continue;
    struct stat st {};
    if (real::fstatat()(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) == 0) continue;  // listed
    char full[PATH_MAX * 2];
    strcpy(full, x->path);
    strcat(full, x->path[1] ? "/" : "");
    strcat(full, name);
    memset(&x->ent, 0, sizeof(x->ent));
    x->ent.d_ino = path_hash(full);
    x->ent.d_off = static_cast<off64_t>(x->cursor);
    x->ent.d_reclen = sizeof(x->ent);
    x->ent.d_type = DT_REG;
    memcpy(x->ent.d_name, name, len + 1);
    out = &x->ent;
  }
  pthread_mutex_unlock(&g_dir_mu);
  return out;
}

void forget(DIR* d, bool rewind_only) {
  pthread_mutex_lock(&g_dir_mu);
  for (DirExtra** p = &g_dirs; *p; p = &(*p)->next) {
    if ((*p)->dir != d) continue;
    DirExtra* x = *p;
    if (rewind_only) {
      x->cursor = 0;
    } else {
      *p = x->next;
      g_ndirs.fetch_sub(1);
      free(x->names);
      free(x);
    }
    break;
  }
  pthread_mutex_unlock(&g_dir_mu);
}

template <class Ent>
Ent* readdir_common(DIR* d, Ent* (*real_readdir)(DIR*)) {
  if (g_ndirs.load(std::memory_order_relaxed) == 0 || t_busy) return real_readdir(d);
  int saved = errno;
  errno = 0;
  Ent* e = real_readdir(d);
  if (e || errno != 0) return e;  // a real entry, or a real error
  Busy busy;
  Ent* s = reinterpret_cast<Ent*>(next_synthesized(d));
  errno = saved;
  return s;
}

template <class Ent>
int scandir_common(const char* path, Ent*** list, int (*filter)(const Ent*),
                   int (*compar)(const Ent**, const Ent**)) {
  // Built on the wrapped opendir/readdir so captured names are included.
  DIR* d = opendir(path);
  if (!d) return -1;
  int saved = errno;
  Ent** out = nullptr;
  size_t n = 0;
  size_t cap = 0;
  bool failed = false;
  for (;;) {
    Ent* e = reinterpret_cast<Ent*>(readdir64(d));
    if (!e) break;
    if (filter && !filter(e)) continue;
    if (n == cap) {
      size_t ncap = cap ? cap * 2 : 32;
      Ent** grown = static_cast<Ent**>(realloc(out, ncap * sizeof(Ent*)));
      if (!grown) {
        failed = true;
        break;
      }
      out = grown;
      cap = ncap;
    }
    Ent* copy = static_cast<Ent*>(malloc(sizeof(Ent)));
    if (!copy) {
      failed = true;
      break;
    }
    memcpy(copy, e, sizeof(Ent));
    out[n++] = copy;
  }
  closedir(d);
  if (failed) {
    for (size_t i = 0; i < n; ++i) free(out[i]);
    free(out);
    errno = ENOMEM;
    return -1;
  }
  if (compar && n > 1)
    qsort(out, n, sizeof(Ent*), reinterpret_cast<int (*)(const void*, const void*)>(compar));
  *list = out;
  errno = saved;
  return static_cast<int>(n);
}

bool scandir_needs_us(const char* path) {
  if (!intercepting()) return false;
  int saved = errno;
  char norm[PATH_MAX];
  bool yes = resolve_path(AT_FDCWD, path, norm) && g_capture.dir_may_hold(norm);
  errno = saved;
  return yes;
}

}  // namespace

namespace ckptfwd::interpose {
void dirs_atfork_prepare() { pthread_mutex_lock(&g_dir_mu); }
void dirs_atfork_parent() { pthread_mutex_unlock(&g_dir_mu); }
void dirs_atfork_child() { pthread_mutex_init(&g_dir_mu, nullptr); }
}  // namespace ckptfwd::interpose

CKPTFWD_EXPORT DIR* opendir(const char* path) {
  DIR* d = real::opendir()(path);
  if (!d && errno == ENOENT && intercepting()) {
    // A captured file exists only through the library: not a directory, as on disk.
    struct stat st;
    char norm[PATH_MAX];
    if (describe_captured(AT_FDCWD, path, 0, &st, norm) == 1) errno = ENOTDIR;
    return d;
  }
  if (!d || !intercepting()) return d;
  int saved = errno;
  char norm[PATH_MAX];
  if (resolve_path(AT_FDCWD, path, norm)) attach_listing(d, norm);
  errno = saved;
  return d;
}

CKPTFWD_EXPORT DIR* fdopendir(int fd) {
  DIR* d = real::fdopendir()(fd);
  if (!d || !intercepting()) return d;
  int saved = errno;
  char norm[PATH_MAX];
  if (resolve_path(fd, ".", norm)) attach_listing(d, norm);
  errno = saved;
  return d;
}

CKPTFWD_EXPORT struct dirent* readdir(DIR* d) { return readdir_common(d, real::readdir()); }
CKPTFWD_EXPORT struct dirent64* readdir64(DIR* d) { return readdir_common(d, real::readdir64()); }

CKPTFWD_EXPORT void rewinddir(DIR* d) {
  real::rewinddir()(d);
  if (g_ndirs.load(std::memory_order_relaxed) != 0) forget(d, true);
}

CKPTFWD_EXPORT int closedir(DIR* d) {
  if (g_ndirs.load(std::memory_order_relaxed) != 0) forget(d, false);
  return real::closedir()(d);
}

CKPTFWD_EXPORT int scandir(const char* path, struct dirent*** list,
                           int (*filter)(const struct dirent*),
                           int (*compar)(const struct dirent**, const struct dirent**)) {
  if (!scandir_needs_us(path)) return real::scandir()(path, list, filter, compar);
  return scandir_common(path, list, filter, compar);
}
CKPTFWD_EXPORT int scandir64(const char* path, struct dirent64*** list,
                             int (*filter)(const struct dirent64*),
                             int (*compar)(const struct dirent64**, const struct dirent64**)) {
  if (!scandir_needs_us(path)) return real::scandir64()(path, list, filter, compar);
  return scandir_common(path, list, filter, compar);
}
