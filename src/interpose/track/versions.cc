#include "interpose/track/versions.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "interpose/client/fate.h"
#include "interpose/client/notices.h"
#include "interpose/setup/state.h"
#include "interpose/setup/trust.h"
#include "interpose/track/blocked_time.h"
#include "interpose/track/detached_close.h"
#include "interpose/track/extent_log.h"
#include "interpose/track/hint_log.h"
#include "interpose/track/leased_open.h"
#include "interpose/track/open_context.h"
#include "interpose/wrap/real.h"
#include "wire/protocol.h"

namespace ckptfwd::interpose {

mode_t effective_mode(int flags, mode_t mode) {
  if (!(flags & O_CREAT)) mode = 0666;  // no mode given: what a new file would get
  return mode & 07777 & ~__atomic_load_n(&g_settings.umask, __ATOMIC_RELAXED);
}

namespace {
char g_forced_reason[64];

// The forwarder cannot take this write open: the caller writes norm directly, unless
// another process writes it through staging right now (then the open fails with EIO:
// two copies would each lack the other's bytes).
void fall_back_at_open(const char* norm, const char* reason, OpenReply& r) {
  if (!claim_direct_fate(norm)) {
    log_msg(
        "ERROR: cannot open %s: forwarder unreachable (%s) while other processes of this "
        "node write it through staging; the open fails with EIO rather than split the file",
        norm, reason);
    r.status = Status::kErr;
    r.err = EIO;
    return;
  }
  char why[1100];
  snprintf(why, sizeof(why), "forwarder unreachable (%s)", reason);
  note_fallback(why, norm);
}
}  // namespace

void request_open(const char* norm, int flags, mode_t mode, OpenReply& r) {
  bool writes = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
  // Read links made so far may show the bytes this open replaces (wire/read_link.h): they
  // stop being found before anything else happens, a leased open included.
  if (writes) {
    map_activity_clock();
    raise_namespace();
  }
  // On a lease first: its fate claim fails where a fate file exists (direct, or staged by
  // another writer), so that check comes only after (leased_open.h).
  if (writes && !test_forced_fallback() && open_on_lease(norm, flags, mode, r)) return;
  if (writes && fate_is_direct(norm)) {
    // Another process of this node fell back for norm: write it directly too (PASS).
    r.status = Status::kPass;
    note_fallback("another process of this node writes it directly", norm);
    return;
  }
  if (writes && test_forced_fallback()) {
    snprintf(g_forced_reason, sizeof(g_forced_reason), "test switch CKPTFWD_TEST_FALLBACK_PID");
    r.status = Status::kUnreachable;
    fall_back_at_open(norm, g_forced_reason, r);
    return;
  }
  char fl[24];
  char md[24];
  wire::fmt_i64(fl, flags);
  wire::fmt_octal(md, effective_mode(flags, mode));
  r.shared = t_open_context.shared_across_nodes;
  const char* req[] = {wire::kOpen, norm, fl, md, "shared"};
  bool malformed = false;
  bool outside = false;
  auto parse = [&r, &malformed, &outside](const wire::Fields& f) {
    long long b = -1;
    if (!wire::parse_u64(f[1], r.vid) || strlen(f[2]) >= sizeof(r.staged) || !f[2][0]) {
      malformed = true;
      return;
    }
    // Only a file directly in our own (checked) session directory: a forwarder that names
    // any other path is not ours, or broken; the given path is never opened (a
    // hostile one could name the user's ~/.profile).
    if (!staged_path_inside(f[2], g_settings.session.dir)) {
      outside = true;
      return;
    }
    strcpy(r.staged, f[2]);
    r.budget = wire::parse_i64(f[3], b) ? b : -1;
    r.extents = strcmp(f[4], "x") == 0;
    unsigned m = 0;
    r.view_mode = r.vid == 0 && f[5][0] && wire::parse_octal(f[5], m) ? m : 0;
  };
  // The forwarder's bulk compression makes way before the OPEN reaches it (a busy
  // forwarder's session thread may take a while to be scheduled).
  if (writes) {
    map_activity_clock();
    note_activity(blocked_clock_ns());
  }
  Result res = call_with(req, r.shared ? 5 : 4, parse);
  r.status = res.status;
  r.err = res.err;
  if (outside) {
    char why[PATH_MAX + 200];
    snprintf(why, sizeof(why),
             "the forwarder answered OPEN of %s with a staged path outside "
             "the session directory %s; refusing it",
             norm, g_settings.session.dir);
    client_refuse(why);
    r.status = Status::kUnreachable;
    r.vid = 0;
  } else if (malformed) {  // a reply we cannot use: fail the open like an I/O error would
    log_msg("malformed OPEN reply for %s", norm);
    r.status = Status::kErr;
    r.err = EIO;
  }
  if (r.status == Status::kUnreachable && writes) fall_back_at_open(norm, unreachable_reason(), r);
}

namespace {
// The fields of CLOSE vid size [ext_file] [hints_file] [blocked_field] into req (6 slots),
// the numbers into v and sz. Their count.
size_t close_fields(unsigned long long vid, long long size, const char* ext_file,
                    const char* hints_file, const char* blocked_field, char (&v)[24],
                    char (&sz)[24], const char** req) {
  wire::fmt_i64(v, static_cast<long long>(vid));
  wire::fmt_i64(sz, size);
  size_t n = 0;
  req[n++] = wire::kClose;
  req[n++] = v;
  req[n++] = sz;
  if (ext_file) req[n++] = ext_file;
  if (hints_file) req[n++] = hints_file;
  if (blocked_field) req[n++] = blocked_field;
  return n;
}

Result call_close(const char* const* req, size_t n) {
  Result r = call(req, n);
  if (r.status == Status::kOk) client_note_closed();
  return r;
}
}  // namespace

Result send_close(unsigned long long vid, long long size, const char* ext_file,
                  const char* hints_file, const char* blocked_field) {
  char v[24], sz[24];
  const char* req[6];
  return call_close(req, close_fields(vid, size, ext_file, hints_file, blocked_field, v, sz, req));
}

bool hand_over_hints(Version* v, char* field, size_t cap) {
  HintLog* h = v->hints.load(std::memory_order_acquire);
  static const char kPrefix[] = "hints=";
  if (!h || cap <= sizeof(kPrefix)) return false;
  memcpy(field, kPrefix, sizeof(kPrefix) - 1);
  if (!hint_log_hand_over(h, field + sizeof(kPrefix) - 1, cap - (sizeof(kPrefix) - 1)))
    return false;
  return true;
}

bool hand_over_blocked(Version* v, char* field, size_t cap) {
  static const char kPrefix[] = "blocked=";
  if (cap < sizeof(kPrefix) + 24) return false;
  unsigned long long ns = v->blocked_ns.exchange(0, std::memory_order_relaxed);
  if (ns == 0) return false;
  memcpy(field, kPrefix, sizeof(kPrefix) - 1);
  wire::fmt_i64(field + sizeof(kPrefix) - 1, static_cast<long long>(ns));
  return true;
}

namespace {
bool copy_whole(int src, int dst);
bool keep_at_close(Version* v, const char* why);
}  // namespace

bool close_version(Version* v) {
  char name[96];
  char hints[112];
  char blocked[40];
  bool whole = v->ext && extent_log_hand_over_prefix(v->ext, name, sizeof(name));
  bool ext = whole || (v->ext && extent_log_hand_over(v->ext, name, sizeof(name)));
  bool typed = hand_over_hints(v, hints, sizeof(hints));
  bool timed = hand_over_blocked(v, blocked, sizeof(blocked));
  // The size CLOSE names (the forwarder goes by the staged file's): written front to
  // back, the prefix's end, without a stat of the staged file.
  const char* end = whole ? strchr(name, '=') : nullptr;
  long long size = -1;
  if (!end || !wire::parse_i64(end + 1, size)) size = staged_size(v);
  char vf[24], sf[24];
  const char* req[6];
  size_t n = close_fields(v->vid, size, ext ? name : nullptr, typed ? hints : nullptr,
                          timed ? blocked : nullptr, vf, sf, req);
  if (close_detached(v, req, n)) return true;
  Result c = call_close(req, n);
  if (c.status != Status::kOk) {
    char why[400];
    if (c.status == Status::kErr)
      snprintf(why, sizeof(why), "forwarder unreachable at close (it lost the version: %s)",
               strerror(c.err));
    else
      snprintf(why, sizeof(why), "forwarder unreachable at close (%s)", unreachable_reason());
    return keep_at_close(v, why);
  }
  if (!v->shared) return true;
  // Shared across nodes: the close returns once this node's overlay is on the store. MPI
  // closes collectively, so what another rank does next (MPI_File_delete or
  // DELETE_ON_CLOSE on its node, a reopen for reading there) comes after this node's
  // bytes are committed, never before them.
  const char* wait[] = {wire::kWaitAll};
  Result r = call(wait, 1);
  if (r.status == Status::kErr)
    log_msg("ERROR: %s (shared across nodes) is NOT committed to the store: %s", v->path,
            strerror(r.err));
  return true;
}

namespace {
bool keep_at_close(Version* v, const char* why) {
  if (v->shared) {
    // This node's staged copy of a file shared across nodes holds other nodes' bytes as
    // zeros: writing it over the real file would destroy theirs.
    log_msg(
        "ERROR: %s (shared across nodes) was not handed over at close (%s); this node's "
        "bytes stay in %s and the close reports EIO",
        v->path, why, v->staged);
    return false;
  }
  return keep_staged_at_close(v->path, v->staged, v->mode, why);
}
}  // namespace

bool keep_staged_at_close(const char* path, const char* staged, unsigned mode, const char* why) {
  if (!claim_direct_fate(path)) {
    log_msg(
        "ERROR: %s was not handed over at close (%s) and other processes of this node write "
        "it through staging: writing it directly would split it; its bytes stay in %s and "
        "the close reports EIO",
        path, why, staged);
    return false;
  }
  int src = real::open()(staged, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  int dst = src < 0
                ? -1
                : real::open()(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode ? mode : 0644);
  bool ok = dst >= 0 && copy_whole(src, dst);
  int err = errno;
  if (dst >= 0 && real::close()(dst) != 0) ok = false;
  if (src >= 0) real::close()(src);
  if (!ok) {
    log_msg(
        "ERROR: %s was not handed over at close (%s) and could not be written to its "
        "real path (%s): its bytes are in %s; the close reports EIO",
        path, why, strerror(err), staged);
    return false;
  }
  // The real file is the copy now: a forwarder started later must not commit a second,
  // older one from staging (its .meta goes first, as the forwarder's own retire does).
  char meta[PATH_MAX];
  size_t len = strlen(staged);
  if (len > 5 && strcmp(staged + len - 5, ".data") == 0 && len < sizeof(meta)) {
    memcpy(meta, staged, len - 5);
    strcpy(meta + len - 5, ".meta");
    real::unlink()(meta);
  }
  real::unlink()(staged);
  note_fallback(why, path);
  return true;
}

// The hint log of v, created at its first typed write (racing threads: one wins).
static HintLog* hints_of(Version* v) {
  HintLog* h = v->hints.load(std::memory_order_acquire);
  if (h || !g_settings.session_ok) return h;
  HintLog* mine = hint_log_create(v->vid, g_settings.session.dir);
  if (!mine) return nullptr;  // out of memory: no hints, nothing else changes
  if (v->hints.compare_exchange_strong(h, mine, std::memory_order_acq_rel)) return mine;
  hint_log_destroy(mine);
  return h;
}

void note_written(int fd, Version* v, long long start, long long n) {
  // (start as documented in versions.h; -2: the bytes end at the end of the file)
  uint8_t dtype = t_write_dtype;
  if (n <= 0 || (!v->ext && !dtype) || v->abandoned.load() || v->view || t_fill_only) return;
  int saved = errno;
  // pwrite on an O_APPEND fd appends whatever the offset says (Linux): the bytes end at
  // the end of the file, like a cursor write ends at the file position.
  if (start >= 0) {
    int fl = real::fcntl()(fd, F_GETFL);
    if (fl >= 0 && (fl & O_APPEND)) start = -2;
  }
  if (start < 0) {
    // -1: the bytes end at the file position (pwritev2 with offset -1 uses it too);
    // -2 (RWF_APPEND) or a positional write on an O_APPEND fd: at the end of the file.
    off_t pos = -1;
    if (start == -1) pos = lseek(fd, 0, SEEK_CUR);
    if (start == -2) {
      struct stat st {};
      if (real::fstat()(fd, &st) == 0) pos = st.st_size;
    }
    start = pos >= n ? pos - n : -1;
  }
  if (start >= 0 && dtype) {
    if (HintLog* h = hints_of(v)) {
      hint_log_add(h, static_cast<uint64_t>(start), static_cast<uint64_t>(n), dtype);
      if (const ViewShape* view = t_write_view) hint_log_add_view(h, *view);
    }
  }
  if (!v->ext) {
    // hints only: bytes that cannot be placed just go without a hint
  } else if (start >= 0) {
    extent_log_add(v->ext, static_cast<uint64_t>(start), static_cast<uint64_t>(n));
  } else {
    // Cannot place the bytes: the forwarder must not trust this process's extents.
    log_msg("cannot tell where %lld bytes written into %s went", n, v->path);
    extent_log_mark_lost(v->ext);
  }
  errno = saved;
}

bool send_abandon(unsigned long long vid, const char* norm) {
  char v[24];
  wire::fmt_i64(v, static_cast<long long>(vid));
  const char* req[] = {wire::kAbandon, v};
  Result r = call(req, 2);
  if (r.status == Status::kOk) return true;  // the forwarder made the path's fate direct
  if (r.status == Status::kErr && r.err == EBUSY) {
    log_msg(
        "ERROR: %s cannot fall back to direct writes in this process alone: other processes "
        "of this node write it through staging (the file would be split)",
        norm);
    return false;
  }
  return claim_direct_fate(norm);  // no forwarder to ask: the fate file decides
}

// A read view's staged file is 0600; fstat must show the captured file's own mode (cp -p
// and mv copy it). 0 if unknown.
static unsigned view_mode(const char* norm) {
  unsigned mode = 0;
  const char* req[] = {wire::kStat, norm};
  auto parse = [&mode](const wire::Fields& f) {
    if (!wire::parse_octal(f[2], mode)) mode = 0;
  };
  call_with(req, 2, parse);
  return mode;
}

bool track_fd(int fd, const OpenReply& r, const char* norm, mode_t mode) {
  Version* v = version_create(r.vid, r.budget, mode, norm, r.staged);
  Version* prev = nullptr;
  bool record = r.shared || r.extents;
  if (v && record && r.vid != 0 && !(v->ext = extent_log_create(r.vid))) {
    version_destroy(v);  // cannot record its extents: write the real file instead
    v = nullptr;
  }
  if (v) {
    v->shared = r.shared;
    v->leased = r.leased;
    v->lease_conn = r.lease_conn;
    v->view = r.vid == 0;
    if (v->view) v->mode = r.view_mode ? r.view_mode : view_mode(norm);
  }
  if (!v || !g_fds.attach(fd, v, &prev)) {
    if (v) extent_log_destroy(v->ext);
    version_destroy(v);
    if (r.vid == 0) return true;  // a view works untracked (fstat shows the staged file)
    if (send_abandon(r.vid, norm))
      note_fallback("cannot track the staged file (fd table or memory)", norm);
    return false;
  }
  if (prev) release_version(prev);  // a stale entry (fd closed behind our back)
  return true;
}

namespace {
// The last directory parent_dev looked at: a script writing or reading thousands of files
// in one directory pays one stat a second for it instead of one per file (an fstat of
// each). A directory's device changes only with a mount over it.
constexpr unsigned long long kParentDevNs = 1000000000ull;
pthread_mutex_t g_parent_mu = PTHREAD_MUTEX_INITIALIZER;
char g_parent[PATH_MAX];
unsigned long long g_parent_dev = 0, g_parent_at = 0;
}  // namespace

unsigned long long parent_dev(const char* norm) {
  char parent[PATH_MAX];
  strcpy(parent, norm);
  char* slash = strrchr(parent, '/');
  if (slash) slash[slash == parent ? 1 : 0] = '\0';
  const unsigned long long now = blocked_clock_ns();
  pthread_mutex_lock(&g_parent_mu);
  unsigned long long dev =
      g_parent_dev && now - g_parent_at < kParentDevNs && strcmp(parent, g_parent) == 0
          ? g_parent_dev
          : 0;
  pthread_mutex_unlock(&g_parent_mu);
  if (dev) return dev;
  struct stat st {};
  dev = real::stat()(parent, &st) == 0 ? st.st_dev : 0;
  if (!dev) return 0;
  pthread_mutex_lock(&g_parent_mu);
  strcpy(g_parent, parent);
  g_parent_dev = dev;
  g_parent_at = now;
  pthread_mutex_unlock(&g_parent_mu);
  return dev;
}

unsigned long long version_dev(const Version* v) {
  unsigned long long dev = v->dev.load(std::memory_order_relaxed);
  if (dev) return dev;
  int saved = errno;
  dev = parent_dev(v->path);
  errno = saved;
  v->dev.store(dev, std::memory_order_relaxed);
  return dev;
}

void present_as_captured(const Version* v, struct stat* st) {
  st->st_dev = version_dev(v);
  st->st_ino = static_cast<ino_t>(path_hash(v->path));
  st->st_nlink = 1;
  if (v->mode) st->st_mode = S_IFREG | (v->mode & 07777);
}

long long staged_size_of(const char* staged) {
  struct stat st {};
  return real::stat()(staged, &st) == 0 ? static_cast<long long>(st.st_size) : 0;
}

long long staged_size(const Version* v) { return staged_size_of(v->staged); }

bool release_version(Version* v) {
  if (!FdTable::release(v)) return true;
  if (v->abandoned.load()) return true;  // kept: a racing writer may still hold the pointer
  bool ok = true;
  if (!v->view && v->owned.load() && !v->close_sent.exchange(true)) ok = close_version(v);
  extent_log_destroy(v->ext, v->owned.load());
  hint_log_destroy(v->hints.load(), v->owned.load());
  version_destroy(v);
  print_new_notices();
  return ok;
}

void track_dup(int oldfd, int newfd) {
  if (oldfd == newfd) return;
  Version* v = g_fds.get(oldfd);
  Version* prev = nullptr;
  if (v && !v->abandoned.load()) {
    if (!g_fds.attach(newfd, v, &prev)) prev = g_fds.detach(newfd);
  } else {
    prev = g_fds.detach(newfd);
  }
  if (prev) release_version(prev);
}

// ---- fallback to the real path ----

namespace {
pthread_mutex_t g_fb_mu = PTHREAD_MUTEX_INITIALIZER;

bool copy_all(int src, int dst, long long size) {
  loff_t in = 0;
  loff_t out = 0;
  while (in < size) {
    ssize_t n = real::copy_file_range()(src, &in, dst, &out, static_cast<size_t>(size - in), 0);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) break;  // source shorter than expected
    // Kernel cannot copy between these file systems: plain read/write from where it got.
    char buf[65536];
    while (in < size) {
      ssize_t r = pread(src, buf, sizeof(buf), in);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return r == 0;
      for (ssize_t done = 0; done < r;) {
        ssize_t w = real::pwrite()(dst, buf + done, static_cast<size_t>(r - done), out + done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        done += w;
      }
      in += r;
      out += r;
    }
  }
  return true;
}

// dst := all of src (copied from offset 0, then cut to src's size): the staged bytes
// written to the real file, by a fallback while writing or at close.
bool copy_whole(int src, int dst) {
  struct stat st {};
  return real::fstat()(src, &st) == 0 && copy_all(src, dst, st.st_size) &&
         real::ftruncate()(dst, st.st_size) == 0;
}
}  // namespace

bool switch_to_real(int fd, Version* v, const char* why) {
  Busy busy;
  int saved = errno;
  bool ok = false;
  pthread_mutex_lock(&g_fb_mu);
  if (g_fds.get(fd) != v) {
    ok = g_fds.get(fd) == nullptr && v->abandoned.load();  // another fd of v switched it
  } else if (v->owned.load() && !v->view) {
    v->switching.store(true);
    while (v->writers.load() > 0) sched_yield();  // let writes in flight land first
    int fl = real::fcntl()(fd, F_GETFL);
    int acc = fl >= 0 ? (fl & O_ACCMODE) : O_WRONLY;
    if (acc == O_RDONLY) acc = O_WRONLY;
    // The staged bytes are held open before the forwarder is asked: once it agrees it
    // forgets the version and may remove the staged file.
    int src = real::open()(v->staged, O_RDONLY | O_CLOEXEC);
    bool allowed = src >= 0 && send_abandon(v->vid, v->path);
    // Refused: stop checking the budget (asking again at every write costs a round trip);
    // staging's real ENOSPC still comes back here. Writers read budget without a lock.
    if (src >= 0 && !allowed) __atomic_store_n(&v->budget, -1LL, __ATOMIC_RELAXED);
    int real_fd =
        allowed ? real::open()(v->path, acc | (fl & O_APPEND) | O_CREAT | O_CLOEXEC, v->mode) : -1;
    if (real_fd >= 0 && src >= 0 && copy_whole(src, real_fd)) {
      off_t pos = lseek(fd, 0, SEEK_CUR);
      // Every fd sharing v shares one open file description: move them all.
      bool moved = true;
      g_fds.for_each([&](int other, Version* w) {
        if (w != v) return;
        int fdfl = real::fcntl()(other, F_GETFD);
        int cloexec = (fdfl >= 0 && (fdfl & FD_CLOEXEC)) ? O_CLOEXEC : 0;
        if (real::dup3()(real_fd, other, cloexec) < 0) moved = false;
      });
      if (pos >= 0) lseek(fd, pos, SEEK_SET);
      if (moved) {
        v->abandoned.store(true);
        g_fds.for_each([&](int other, Version* w) {
          if (w == v && g_fds.detach(other)) FdTable::release(v);
        });
        char msg[400];
        snprintf(msg, sizeof(msg), "staging cannot hold more (%s)", why);
        note_fallback(msg, v->path);
        ok = true;
      }
    }
    if (!ok)
      log_msg("could not switch %s to the real file (%s); the write goes to staging", v->path,
              strerror(errno));
    if (src >= 0) real::close()(src);
    if (real_fd >= 0) real::close()(real_fd);
    v->switching.store(false);
  }
  pthread_mutex_unlock(&g_fb_mu);
  errno = saved;
  return ok;
}

bool exceeds_budget(int fd, const Version* v, long long offset, size_t len) {
  if (v->budget < 0) return false;
  int saved = errno;
  long long pos = offset;
  if (pos < 0) {
    int fl = real::fcntl()(fd, F_GETFL);
    if (fl >= 0 && (fl & O_APPEND)) {
      struct stat st {};
      pos = real::fstat()(fd, &st) == 0 ? st.st_size : 0;
    } else {
      pos = lseek(fd, 0, SEEK_CUR);
    }
  }
  long long end = pos + static_cast<long long>(len);
  bool over = false;
  if (pos >= 0 && end > v->budget) {
    struct stat st {};  // overwriting inside the current size does not grow it
    over = real::fstat()(fd, &st) != 0 || end > st.st_size;
  }
  errno = saved;
  return over;
}

void fallback_atfork_child() {
  pthread_mutex_init(&g_fb_mu, nullptr);
  pthread_mutex_init(&g_parent_mu, nullptr);  // (parent_dev's cache)
}

}  // namespace ckptfwd::interpose
