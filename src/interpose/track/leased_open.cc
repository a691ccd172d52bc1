#include "interpose/track/leased_open.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include <cstdio>

#include "interpose/client/client.h"
#include "interpose/setup/state.h"
#include "interpose/track/activity_clock.h"
#include "interpose/track/blocked_time.h"
#include "interpose/track/open_context.h"
#include "interpose/wrap/real.h"
#include "wire/fate.h"
#include "wire/lease.h"
#include "wire/session.h"

namespace ckptfwd::interpose {
namespace {

// What the forwarder's OPEN would find out first: norm is a regular file, or is missing
// from a directory that exists (*missing; anything else takes the usual OPEN and its
// answer). Resolving the path found it missing already when t_real_path_absent is norm
// (lstat: ENOENT, so stat too): not looked at again.
bool fits_lease(const char* norm, bool* missing) {
  struct stat st {};
  *missing = false;
  if (t_real_path_absent != norm) {
    if (real::stat()(norm, &st) == 0) return S_ISREG(st.st_mode);
    if (errno != ENOENT) return false;
  }
  const char* slash = strrchr(norm, '/');
  if (!slash) return false;
  char dir[PATH_MAX];
  size_t len = slash == norm ? 1 : static_cast<size_t>(slash - norm);
  if (len >= sizeof(dir)) return false;
  memcpy(dir, norm, len);
  dir[len] = '\0';
  *missing = real::stat()(dir, &st) == 0 && S_ISDIR(st.st_mode);
  return *missing;
}

}  // namespace

bool open_on_lease(const char* norm, int flags, mode_t mode, OpenReply& r) {
  // O_CREAT too: without it the open fails where the path is nowhere (the store included),
  // which only the forwarder knows.
  if (!g_settings.leased_open || !(flags & O_TRUNC) || !(flags & O_CREAT) || (flags & O_EXCL) ||
      (flags & O_ACCMODE) == O_RDONLY || t_open_context.shared_across_nodes)
    return false;
  int saved = errno;
  bool missing = false;
  bool fits = fits_lease(norm, &missing);
  errno = saved;
  wire::Lease lease;
  unsigned conn = 0;
  if (!fits || !client_take_lease(&lease, &conn)) return false;
  const char* dir = g_settings.session.dir;
  char claim[PATH_MAX], fate_name[PATH_MAX], use[48];
  // The claim the forwarder would make (wire/fate.h): fails while any process of the node
  // writes norm (staged or direct), which the usual OPEN then sorts out. Unused, the
  // lease goes back for the next open. A claim left behind when the OPEN cannot be sent
  // names a live forwarder, whose next OPEN of norm takes it over, or a dead one, which
  // any process may replace.
  if (!staged_file(dir, lease.vid, "data", r.staged, sizeof(r.staged)) ||
      !fate::claim_file(dir, lease.pid, claim, sizeof(claim)) ||
      !fate::fate_file(dir, norm, fate_name, sizeof(fate_name)) ||
      !wire::format_lease_use(lease.vid, use, sizeof(use)) || real::link()(claim, fate_name) != 0) {
    client_put_back_lease(lease, conn);
    errno = saved;
    return false;
  }
  map_activity_clock();
  // The caller raised the namespace generation before the claim; again now that the claim
  // is there: a read link published in between (its plan looked before the claim) is not
  // found (wire/read_link.h).
  raise_namespace();
  note_activity(blocked_clock_ns());
  char fl[24], md[24];
  wire::fmt_i64(fl, flags);
  wire::fmt_octal(md, effective_mode(flags, mode));
  const char* req[] = {wire::kOpen, norm, fl, md, use, wire::kLeaseSeenNew};
  if (!call_leased(req, missing ? 6 : 5, conn)) {
    errno = saved;
    return false;
  }
  r.status = Status::kOk;
  r.err = 0;
  r.vid = lease.vid;
  r.budget = lease.budget;
  r.shared = false;
  r.extents = true;  // not known yet: a version that is no new file ignores them
  r.view_mode = 0;
  r.leased = true;
  r.lease_conn = conn;
  errno = saved;
  return true;
}

}  // namespace ckptfwd::interpose
