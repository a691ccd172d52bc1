#include "wire/setting_value.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ckptfwd::wire {

namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// [b, e) trimmed and NUL-terminated in place.
char* trim_in_place(char* b, char* e) {
  while (b < e && blank(*b)) ++b;
  while (e > b && blank(e[-1])) --e;
  *e = '\0';
  return b;
}

// The file CKPTFWD_CONFIG names, read once per path.
struct ConfigFile {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  char path[4096] = {};
  bool loaded = false;
  // The file read: read again when it changed (a job script that rewrites it between
  // commands, a test).
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = -1;
  timespec mtime{};
  char text[kConfigFileMax + 1] = {};
  ConfigLine lines[kConfigLinesMax] = {};
  int n = 0;
  char problem[256] = {};
};
ConfigFile g_file;

void load_locked(const char* path) {
  ConfigFile& f = g_file;
  f.n = 0;
  f.problem[0] = '\0';
  f.loaded = true;
  f.size = -1;
  snprintf(f.path, sizeof(f.path), "%s", path);
  // O_NONBLOCK: a FIFO must not hold the application's start; only a regular file is read.
  int fd = static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd < 0) {
    snprintf(f.problem, sizeof(f.problem), "CKPTFWD_CONFIG=%s: cannot read the file: %s", path,
             strerror(errno));
    return;
  }
  struct stat st;
  if (syscall(SYS_fstat, fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    syscall(SYS_close, fd);
    snprintf(f.problem, sizeof(f.problem), "CKPTFWD_CONFIG=%s: not a regular file", path);
    return;
  }
  f.dev = st.st_dev;
  f.ino = st.st_ino;
  f.size = st.st_size;
  f.mtime = st.st_mtim;
  size_t len = 0;
  for (;;) {
    long r = syscall(SYS_read, fd, f.text + len, kConfigFileMax + 1 - len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += static_cast<size_t>(r);
    if (len > kConfigFileMax) break;
  }
  syscall(SYS_close, fd);
  if (len > kConfigFileMax) {
    snprintf(f.problem, sizeof(f.problem), "CKPTFWD_CONFIG=%s: longer than %zu bytes", path,
             kConfigFileMax);
    return;
  }
  f.text[len] = '\0';
  int found = split_config_text(f.text, len, f.lines, kConfigLinesMax);
  if (found > kConfigLinesMax) {
    snprintf(f.problem, sizeof(f.problem), "CKPTFWD_CONFIG=%s: more than %d settings", path,
             kConfigLinesMax);
    f.n = 0;
    return;
  }
  f.n = found;
  for (int i = 0; i < f.n; ++i)
    if (!f.lines[i].key) {
      snprintf(f.problem, sizeof(f.problem), "%s:%d: expected key = value", path, f.lines[i].line);
      break;
    }
}

// The loaded file for the current CKPTFWD_CONFIG; nullptr when it is unset or empty.
ConfigFile* current_file() {
  const char* path = getenv("CKPTFWD_CONFIG");
  if (!path || !*path) return nullptr;
  struct stat st;
  const bool seen = syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) == 0;
  pthread_mutex_lock(&g_file.mu);
  const ConfigFile& f = g_file;
  if (!f.loaded || strcmp(f.path, path) != 0 || !seen || f.size != st.st_size ||
      f.dev != st.st_dev || f.ino != st.st_ino || f.mtime.tv_sec != st.st_mtim.tv_sec ||
      f.mtime.tv_nsec != st.st_mtim.tv_nsec)
    load_locked(path);
  pthread_mutex_unlock(&g_file.mu);
  return &g_file;
}

}  // namespace

int split_config_text(char* text, size_t len, ConfigLine* lines, int cap) {
  int n = 0, lineno = 0;
  for (char* p = text; p < text + len;) {
    char* eol = static_cast<char*>(memchr(p, '\n', static_cast<size_t>(text + len - p)));
    if (!eol) eol = text + len;
    ++lineno;
    char* hash = static_cast<char*>(memchr(p, '#', static_cast<size_t>(eol - p)));
    char* end = hash ? hash : eol;
    char* eq = static_cast<char*>(memchr(p, '=', static_cast<size_t>(end - p)));
    char* next = eol + (eol < text + len ? 1 : 0);
    if (eq) {
      ConfigLine l{trim_in_place(p, eq), trim_in_place(eq + 1, end), lineno};
      if (n < cap) lines[n] = l;
      ++n;
    } else if (*trim_in_place(p, end)) {
      if (n < cap) lines[n] = ConfigLine{nullptr, nullptr, lineno};
      ++n;
    }
    p = next;
  }
  return n;
}

const char* setting_value(const char* name, SettingOrigin* from) {
  if (from) *from = SettingOrigin{};
  if (const char* v = getenv(name); v && *v) {
    if (from) from->kind = SettingOrigin::kEnvironment;
    return v;
  }
  ConfigFile* f = current_file();
  if (!f || f->n == 0) return nullptr;
  const char* bare = strncasecmp(name, "CKPTFWD_", 8) == 0 ? name + 8 : name;
  for (int i = f->n - 1; i >= 0; --i) {
    const char* key = f->lines[i].key;
    if (!key) continue;
    if (strncasecmp(key, "CKPTFWD_", 8) == 0) key += 8;
    if (strcasecmp(key, bare) != 0) continue;
    if (from) *from = SettingOrigin{SettingOrigin::kFile, f->path, f->lines[i].line};
    return f->lines[i].value;
  }
  return nullptr;
}

int config_file_lines(const ConfigLine** lines, const char** path) {
  ConfigFile* f = current_file();
  *lines = f ? f->lines : nullptr;
  *path = f ? f->path : nullptr;
  return f ? f->n : 0;
}

const char* config_file_problem() {
  ConfigFile* f = current_file();
  return f && f->problem[0] ? f->problem : nullptr;
}

}  // namespace ckptfwd::wire
