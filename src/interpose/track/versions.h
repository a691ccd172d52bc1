// The life of a captured file version on the client side: ask the forwarder to open it,
// hook the staged fd into the fd table, hand it back (CLOSE) when its last fd goes, and
// switch an fd to the real path when staging cannot take more (fallback).
#pragma once
#include <errno.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <climits>

#include "interpose/client/client.h"
#include "interpose/track/fd_table.h"
#include "interpose/track/write_context.h"

namespace ckptfwd::interpose {

struct OpenReply {
  Status status = Status::kUnreachable;
  int err = 0;
  unsigned long long vid = 0;  // 0: read-only view
  long long budget = -1;
  char staged[PATH_MAX] = {};
  // Asked as "shared" (t_open_context.shared_across_nodes, set by the MPI layer): the
  // version records the extents this process writes (extent_log.h).
  bool shared = false;
  // The forwarder asked for this process's extents ("x" after the budget): the version
  // is committed as an overlay of the bytes written (a new file, or shared across nodes).
  bool extents = false;
  // A read-only view: the captured file's mode from the reply (0: not sent, ask STAT).
  unsigned view_mode = 0;
  bool leased = false;      // opened on a lease (leased_open.h): its CLOSE may go unwaited
  unsigned lease_conn = 0;  // the connection the lease came on
};

// OPEN norm flags mode [shared]. A write open the forwarder cannot take (unreachable) is counted as
// a fallback here; the caller then does the real open.
void request_open(const char* norm, int flags, mode_t mode, OpenReply& r);
// Read links (wire/read_link.h; read_link_open.cc): for a read-only open (no O_CREAT, no
// O_TRUNC) of norm, just resolved by captured_path in this thread, when the forwarder
// makes read links, nothing exists at norm on the real file system, and the link for norm
// and the current namespace generation exists: r filled as the forwarder's reply would
// be (kOk, vid 0, staged = the link, view_mode = its permission bits), true. errno kept.
bool find_read_link(const char* norm, int flags, OpenReply& r);
// request_open, then open_file(r.staged). A read view the forwarder released between its
// reply and the open (its grace ended, State::view_grace) is asked for once more when
// may_retry. A read link found first is opened without a request; one gone meanwhile
// sends the request. Returns open_file's result, or `failed` without calling it when the
// reply is not kOk (r.status says why).
template <class T, class OpenFile>
T open_staged(const char* norm, int flags, mode_t mode, OpenReply& r, bool may_retry, T failed,
              OpenFile open_file) {
  T got = failed;
  // (Only where the open may be tried again: a freopen's stream is gone after a failure.)
  if (may_retry && find_read_link(norm, flags, r)) {
    int saved = errno;
    got = open_file(r.staged);
    if (got != failed) return got;
    errno = saved;
  }
  for (int attempt = 0; attempt < (may_retry ? 2 : 1); ++attempt) {
    request_open(norm, flags, mode, r);
    if (r.status != Status::kOk) return failed;
    got = open_file(r.staged);
    if (got != failed || r.vid != 0 || errno != ENOENT) break;
  }
  return got;
}
// The mode sent to the forwarder and kept for a fallback file: mode & ~umask.
mode_t effective_mode(int flags, mode_t mode);
// Records fd as writing version r.vid. On failure (fd outside the table, no memory) the
// version is abandoned and false returned: the caller closes fd and opens the real path.
bool track_fd(int fd, const OpenReply& r, const char* norm, mode_t mode);
// ABANDON vid: this process writes norm directly from now on. True if it may: the
// forwarder agreed (it was the version's only writer), or, unreachable, the fate file
// let it (interpose/client/fate.h). False: other processes write norm through staging; the
// caller must not write it directly (it reports an error instead).
bool send_abandon(unsigned long long vid, const char* norm);
// CLOSE vid size [extents file] [hints=file] [blocked=ns]: ext_file names this process's
// extents (shared versions), hints_file its dtype hints (typed MPI writes), blocked_field
// the time its calls on the version took (blocked_time.h).
Result send_close(unsigned long long vid, long long size, const char* ext_file = nullptr,
                  const char* hints_file = nullptr, const char* blocked_field = nullptr);
// Hands v's dtype hints over: "hints=<file>" in field (cap bytes), or false if none.
bool hand_over_hints(Version* v, char* field, size_t cap);
// The CLOSE of v by this process: with its extents handed over when v is shared. When the
// forwarder cannot take it (unreachable, or it lost the version in a restart), the staged
// bytes are written to the real path instead (keep_at_close). False when neither worked:
// the caller's close reports EIO.
bool close_version(Version* v);
// A version's staged bytes written to its real path after the forwarder could not take its
// CLOSE (why), the staged files removed: true. False (logged, the bytes stay in staged)
// when other processes of the node stage path or the copy failed.
bool keep_staged_at_close(const char* path, const char* staged, unsigned mode, const char* why);
// Records that n bytes were just written into v through fd, starting at start (-1: they
// ended at fd's file position, as write/writev/sendfile leave it): as extents of a shared
// version, and as dtype hints while a typed MPI write is in progress (write_context.h).
// Worth calling only when wants_note(v) (below).
void note_written(int fd, Version* v, long long start, long long n);
// Drops one fd's reference; the last one sends CLOSE (if this process owns the version).
// False when that CLOSE failed and the bytes could not be kept (close_version).
bool release_version(Version* v);
// Handles a tracked fd being duplicated onto newfd (dup, dup2, dup3, F_DUPFD).
void track_dup(int oldfd, int newfd);

// Switches every fd of v to the real path v->path, copying the staged bytes; the
// application never notices. True if fd now writes to the real file.
bool switch_to_real(int fd, Version* v, const char* why);
// A fallback must not copy the staged file while another thread still writes into it
// (those bytes would be lost): writes count themselves in v->writers and the switch
// waits for them; writes arriving during a switch wait for it and then go to the real
// file. Uncontended, this is two atomic operations and no syscall.
inline void wait_for_switch(Version* v) {
  while (v->switching.load()) sched_yield();
}
// Before a write that ends at offset end (or, with end < 0, one that appends len bytes at
// the current position): true if it would grow the staged file past v->budget.
bool exceeds_budget(int fd, const Version* v, long long offset, size_t len);

// st_dev of the directory holding norm (what stat of a captured path reports).
unsigned long long parent_dev(const char* norm);
// v->dev, found (parent_dev of its path) and kept the first time it is asked for.
unsigned long long version_dev(const Version* v);
// fstat of a tracked fd: the staged file's size and times, the captured path's identity
// (cp and others compare stat(path) with fstat(fd)).
void present_as_captured(const Version* v, struct stat* st);

// The size of the staged file (for CLOSE).
long long staged_size(const Version* v);
long long staged_size_of(const char* staged);

inline bool wants_note(const Version* v) { return v->ext || t_write_dtype != 0; }

}  // namespace ckptfwd::interpose
