// Request parsing: turns one decoded frame into a Service call. Never trusts the client:
// every number is checked and every path must be absolute (it is normalised again).
#include <fcntl.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "forwarder/staging/extents.h"
#include "forwarder/util/log.h"
#include "forwarder/util/notices.h"
#include "forwarder/util/test_hooks.h"
#include "forwarder/verbs/service.h"
#include "wire/lease.h"
#include "wire/protocol.h"
#include "wire/session.h"
#include "wire/setting_value.h"
#include "wire/settings_digest.h"

namespace ckptfwd::fwd {

Reply reply_ok(std::vector<std::string> more) {
  more.insert(more.begin(), wire::kOk);
  return more;
}

Reply reply_err(int err) { return {wire::kErr, std::to_string(err)}; }

Reply reply_pass() { return {wire::kPass}; }

namespace {
// The globs this forwarder was started for, absolute (its starter hands them so).
std::string capture_globs() {
  const char* c = wire::setting_value("CKPTFWD_CAPTURE");
  return c ? c : "";
}

bool get_path(const char* in, std::string& out) {
  if (!in || in[0] != '/') return false;
  char buf[PATH_MAX];
  if (!normalize_path(in, "/", buf, sizeof(buf))) return false;
  out = buf;
  return true;
}

bool get_u64(const char* in, uint64_t& out) {
  unsigned long long v;
  if (!wire::parse_u64(in, v)) return false;
  out = v;
  return true;
}
// The optional trailing fields of CLOSE and SYNC from index `from`: an extents file name
// or "whole=<end>", then "hints=<hints file name>" and "blocked=<ns>" (told apart by their
// prefixes, so any may be absent). A blocked time that is not a number is ignored; a
// whole= that is not one leaves the extents unknown (*whole -1, no file).
void trailing_fields(const wire::Fields& f, size_t from, std::string& ext, std::string& hints,
                     int64_t& blocked_ns, int64_t* whole = nullptr) {
  static constexpr char kHintsPrefix[] = "hints=";
  static constexpr char kBlockedPrefix[] = "blocked=";
  static constexpr char kWholePrefix[] = "whole=";
  for (size_t i = from; i < f.n; ++i) {
    if (whole && !strncmp(f[i], kWholePrefix, sizeof(kWholePrefix) - 1)) {
      *whole = parse_whole_end(f[i] + sizeof(kWholePrefix) - 1);
    } else if (!strncmp(f[i], kHintsPrefix, sizeof(kHintsPrefix) - 1)) {
      hints = f[i] + sizeof(kHintsPrefix) - 1;
    } else if (!strcmp(f[i], wire::kCloseNoWait)) {
      // (the session's order, client_session.cc)
    } else if (!strncmp(f[i], kBlockedPrefix, sizeof(kBlockedPrefix) - 1)) {
      long long ns = 0;
      if (wire::parse_i64(f[i] + sizeof(kBlockedPrefix) - 1, ns) && ns > 0) blocked_ns = ns;
    } else if (ext.empty()) {
      ext = f[i];
    }
  }
}
}  // namespace

bool is_leased_open(const wire::Fields& f) {
  return f.n >= 5 && !strcmp(f[0], wire::kOpen) &&
         !strncmp(f[4], wire::kLeasePrefix, sizeof(wire::kLeasePrefix) - 1);
}

bool is_unwaited(const wire::Fields& f) {
  return is_leased_open(f) ||
         (f.n >= 4 && !strcmp(f[0], wire::kClose) && !strcmp(f[f.n - 1], wire::kCloseNoWait));
}

namespace {
// HELLO, STATS, STAT, LIST, the waits for commits (WAITALL, DRAIN: a committed version
// reads as its staged bytes did) and an OPEN that neither writes, creates nor truncates
// change nothing a read open of a captured path gets; anything else may. (Every process
// of a job ends with a WAITALL: its exit must not stop the other processes' links.)
bool leaves_reads_alone(const char* verb_field, const wire::Fields& f) {
  const std::string verb = verb_field;
  if (verb == wire::kHello || verb == wire::kStats || verb == wire::kStat || verb == wire::kList ||
      verb == wire::kWaitAll || verb == wire::kDrain)
    return true;
  long long flags = 0;
  return verb == wire::kOpen && f.n >= 3 && wire::parse_i64(f[2], flags) &&
         (flags & O_ACCMODE) == O_RDONLY && !(flags & (O_CREAT | O_TRUNC));
}
}  // namespace

Reply Service::handle(ClientCtx& cl, const wire::Fields& f) {
  // Read links (wire/read_link.h): a request that may change a read's answer raises the
  // generation before it is handled (no link made before is found any more) and again
  // once the change is there to see (none made while it was under way either: a read
  // open during a write OPEN's copy of its starting bytes did not see that version).
  const bool changes = !leaves_reads_alone(f[0], f);
  if (changes) c_.links.raise();
  cl.read_gen = c_.links.generation();
  Reply r = handle_request(cl, f);
  if (changes) c_.links.raise();
  return r;
}

Reply Service::handle_request(ClientCtx& cl, const wire::Fields& f) {
  const std::string verb = f[0];
  if (test_hooks().at_request) test_hooks().at_request(verb);
  // What another session's leased OPEN did comes first (pipelined_sessions.h); a CLOSE
  // names this client's own version, a STATS asks nothing of the name space.
  if (verb != wire::kClose && verb != wire::kHello && verb != wire::kStats && !is_leased_open(f))
    pipelined_.await_others(cl.pipelined);
  auto bad = [&] {
    LOG_WARN("malformed %s request from pid %ld (%zu fields): ignored", verb.c_str(), cl.pid, f.n);
    return reply_err(EINVAL);
  };
  std::string p1, p2;
  uint64_t a = 0, b = 0;
  if (verb == wire::kHello) {
    long long pid, rank;
    if (f.n < 3 || !wire::parse_i64(f[1], pid) || !wire::parse_i64(f[2], rank)) return bad();
    cl.pid = static_cast<long>(pid);
    cl.rank = static_cast<int>(rank);
    bool has_digest = false;
    uint64_t digest = 0;
    unsigned capture = 0;
    for (size_t i = 3; i < f.n; ++i) {
      if (!strcmp(f[i], wire::kLeasePrefix)) cl.wants_leases = true;
      if (wire::parse_settings(f[i], digest)) has_digest = true;
      wire::parse_capture(f[i], capture);
    }
    if (c_.early_start.hello(has_digest, digest) == EarlyStartCheck::Verdict::kRetire) {
      LOG_INFO(
          "pid %ld runs with other settings than the process that started this forwarder "
          "early: leaving to a forwarder started with its settings",
          cl.pid);
      cl.wants_leases = false;
      return {wire::kRetire};
    }
    // Another run's globs under this job id: served (refused, its restart would not find
    // its checkpoints), its stores where our globs say, and said loudly.
    if (capture && c_.cfg.capture_digest && capture != c_.cfg.capture_digest) {
      char digest[16];
      snprintf(digest, sizeof(digest), "%08x", capture);
      const std::string what =
          "pid " + std::to_string(cl.pid) + " captures other globs (CKPTFWD_CAPTURE) than " +
          "this forwarder of job " + c_.job + " was started for (" + capture_globs() +
          "): its files go to the stores those globs name. Fix: give each run its own " +
          "CKPTFWD_JOB_ID, or the same CKPTFWD_CAPTURE";
      if (notices().post("capture " + std::string(digest), what + log_pointer()))
        LOG_WARN("%s", what.c_str());
    }
    return reply_ok();
  }
  if (verb == wire::kOpen) {
    long long flags;
    unsigned mode;
    if (f.n < 4 || !get_path(f[1], p1) || !wire::parse_i64(f[2], flags) ||
        !wire::parse_octal(f[3], mode))
      return bad();
    if (is_leased_open(f)) {
      unsigned long long vid = 0;
      if (!wire::parse_u64(f[4] + sizeof(wire::kLeasePrefix) - 1, vid)) return bad();
      const bool seen_new = f.n >= 6 && !strcmp(f[5], wire::kLeaseSeenNew);
      Reply r = open_leased(cl, p1, static_cast<int>(flags), mode, vid, seen_new);
      hand_over_lease(cl, r);
      cl.lease_due = true;
      return r;
    }
    bool shared = f.n >= 5 && !strcmp(f[4], "shared");
    Reply r = open(cl, p1, static_cast<int>(flags), mode, shared);
    if ((flags & O_ACCMODE) != O_RDONLY) {
      cl.lease_due = cl.leases.empty() && !cl.lease_made.vid;
      hand_over_lease(cl, r);
    }
    return r;
  }
  if (verb == wire::kClose) {
    if (f.n < 3 || !get_u64(f[1], a) || !get_u64(f[2], b)) return bad();
    std::string ext, hints;
    int64_t blocked_ns = 0, whole = -1;
    trailing_fields(f, 3, ext, hints, blocked_ns, &whole);
    if (is_unwaited(f)) c_.stats.closes_unwaited++;
    Reply r = close(cl, a, b, ext, hints, blocked_ns, whole);
    hand_over_lease(cl, r);
    cl.lease_due = true;
    return r;
  }
  if (verb == wire::kSync) {
    if (f.n < 2 || !get_u64(f[1], a)) return bad();
    std::string ext, hints;
    int64_t blocked_ns = 0;
    trailing_fields(f, 2, ext, hints, blocked_ns);
    return sync(cl, a, ext, hints, blocked_ns);
  }
  if (verb == wire::kWaitAll) return waitall(cl);
  if (verb == wire::kAbandon) {
    if (f.n < 2 || !get_u64(f[1], a)) return bad();
    return abandon(cl, a);
  }
  if (verb == wire::kStat) {
    if (f.n < 2 || !get_path(f[1], p1)) return bad();
    return stat(p1);
  }
  if (verb == wire::kRename) {
    if (f.n < 3 || !get_path(f[1], p1) || !get_path(f[2], p2)) return bad();
    return rename(p1, p2);
  }
  if (verb == wire::kUnlink) {
    if (f.n < 2 || !get_path(f[1], p1)) return bad();
    return unlink(p1);
  }
  if (verb == wire::kList) {
    if (f.n < 2 || !get_path(f[1], p1)) return bad();
    return list(p1);
  }
  if (verb == wire::kChmod) {
    unsigned mode;
    if (f.n < 3 || !get_path(f[1], p1) || !wire::parse_octal(f[2], mode) || mode > 07777)
      return bad();
    return chmod(p1, mode);
  }
  if (verb == wire::kRefresh) {
    if (f.n < 2 || !get_path(f[1], p1)) return bad();
    return refresh(p1);
  }
  if (verb == wire::kStats) return stats(f.n >= 2 && std::string(f[1]) == "vars");
  if (verb == wire::kDrain) return drain();
  LOG_WARN("unknown verb '%.40s' from pid %ld", verb.c_str(), cl.pid);
  return reply_err(ENOSYS);
}

}  // namespace ckptfwd::fwd
