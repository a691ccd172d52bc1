// Leased opens: a write open of a new version without waiting for the forwarder.
//
// A small file costs its writer the OPEN's round trip and the forwarder's work behind it
// (a fate claim, a staged file and its .meta created) before the application may write.
// A lease moves that work off the application's wait: the forwarder makes a staged file
// ahead of time and hands it to one client connection; the library's next write open
// that fits (below) takes it, claims the path's fate itself (the one link(2) the
// forwarder would make, wire/fate.h), sends OPEN with the lease and returns at once. The
// forwarder acts on that OPEN while the application writes; its reply is read before the
// client's next request's.
//
//   lease=<vid>.<budget>.<pid>   the last field of an OK reply to a write OPEN or a
//                                CLOSE: the empty staged file v<vid>.data exists in the
//                                session directory, described as kLeaseMeta in its lease
//                                journal (common/lease_journal.h), for this
//                                connection only; budget as in OPEN's reply ("-1":
//                                unlimited); pid: the forwarder, whose claim file
//                                fate.staged.<pid> the client links.
//   OPEN path flags mode lease=<vid> [new]
//                                the client opened v<vid>.data for path and linked the
//                                claim under path's fate name; the forwarder makes the
//                                version, which it describes at the CLOSE (or, if it
//                                cannot make it, forgets vid). Reply as for OPEN; the
//                                client does not wait for it. "new": the client found
//                                nothing at path and a directory where path's is (the
//                                checks below): the forwarder, whose stat of them would
//                                answer the same a moment later, does not look again
//                                (two path walks less for every new small file).
// Whatever goes wrong after the client's open returned (the OPEN refused, the forwarder
// lost and restarted) makes that file's CLOSE fail with ESTALE (no such version): the
// library then writes the bytes to the real path from the staged file, as after any lost
// forwarder; a recovery leaves a staged file whose description is still kLeaseMeta for that.
//
// The CLOSE of a version opened on a lease is not waited for either (interpose/track/
// detached_close.h):
//   CLOSE vid size [extents] [hints=...] [blocked=...] nowait
// The forwarder acts on it as on any CLOSE, in its connection's order; the client reads
// its reply before its next waited request's, or when its next open looks for a lease,
// and acts on an error then (it writes the real path from the staged file, which the
// forwarder keeps for that: forget_leased). Until then the pipelining rules hold for it
// as for a leased OPEN (forwarder/util/pipelined_sessions.h): a request of another
// session about any path waits until it was acted on.
//
// A lease fits an open with O_CREAT and O_TRUNC, without O_EXCL, not shared across nodes, of a path
// that is a regular file or does not exist in a directory that does, and whose fate file
// does not exist (no process of the node writes it now). Anything else takes the usual
// OPEN (which waits). The client records its extents (the "x" of an OPEN reply): a
// version that turns out not to be a new file ignores them.
// Dependency free and allocation free (the preload library uses it).
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstring>

#include "wire/protocol.h"

namespace ckptfwd::wire {

inline constexpr char kLeasePrefix[] = "lease=";
// The OPEN field after lease=<vid> when the client saw no file at the path.
inline constexpr char kLeaseSeenNew[] = "new";
// The last field of a CLOSE its client does not wait for.
inline constexpr char kCloseNoWait[] = "nowait";
// The content of a lease's v<vid>.meta until the version's CLOSE writes its description: a
// recovery leaves such files be, as their client may still write the real path from the
// staged file (a lease's version has no description before its CLOSE).
inline constexpr char kLeaseMeta[] = "lease\n";

// True if the file at `path` (never through a symbolic link) holds kLeaseMeta.
inline bool is_lease_meta_file(const char* path) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  char buf[sizeof(kLeaseMeta)] = {};
  ssize_t n = ::read(fd, buf, sizeof(buf));
  ::close(fd);
  return n == static_cast<ssize_t>(sizeof(kLeaseMeta) - 1) &&
         memcmp(buf, kLeaseMeta, sizeof(kLeaseMeta) - 1) == 0;
}

struct Lease {
  unsigned long long vid = 0;  // 0: none
  long long budget = -1;
  long long pid = 0;
};

// "lease=<vid>.<budget>.<pid>" into buf; false if it does not fit.
inline bool format_lease(const Lease& l, char* buf, size_t cap) {
  int n = snprintf(buf, cap, "%s%llu.%lld.%lld", kLeasePrefix, l.vid, l.budget, l.pid);
  return n > 0 && static_cast<size_t>(n) < cap;
}

// Parses a field written by format_lease; false (l untouched) for anything else.
inline bool parse_lease(const char* field, Lease& l) {
  if (strncmp(field, kLeasePrefix, sizeof(kLeasePrefix) - 1) != 0) return false;
  char buf[80];
  const char* s = field + sizeof(kLeasePrefix) - 1;
  size_t len = strlen(s);
  if (len >= sizeof(buf)) return false;
  memcpy(buf, s, len + 1);
  char* dot1 = strchr(buf, '.');
  char* dot2 = dot1 ? strchr(dot1 + 1, '.') : nullptr;
  if (!dot2) return false;
  *dot1 = *dot2 = '\0';
  Lease got;
  long long budget = 0, pid = 0;
  if (!parse_u64(buf, got.vid) || got.vid == 0 || !parse_i64(dot1 + 1, budget) ||
      !parse_i64(dot2 + 1, pid) || pid <= 0 || budget < -1)
    return false;
  got.budget = budget;
  got.pid = pid;
  l = got;
  return true;
}

// "lease=<vid>" (the OPEN field) into buf.
inline bool format_lease_use(unsigned long long vid, char* buf, size_t cap) {
  int n = snprintf(buf, cap, "%s%llu", kLeasePrefix, vid);
  return n > 0 && static_cast<size_t>(n) < cap;
}

}  // namespace ckptfwd::wire
