// Leased opens (wire/lease.h): a staged file made for a client ahead of its next write
// open, handed over in a reply, and the OPEN that uses it, acted on while the application
// writes. The client does not wait for that OPEN's reply: whatever goes wrong here makes
// its CLOSE fail with ESTALE (no such version), and the library then writes the bytes to
// the real path itself (interpose/track/versions.cc).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "base/monotonic.h"
#include "forwarder/staging/staging.h"
#include "forwarder/state/fate_file.h"
#include "forwarder/util/log.h"
#include "forwarder/util/store_paths.h"
#include "forwarder/util/test_hooks.h"
#include "forwarder/verbs/service.h"
#include "wire/lease.h"

namespace ckptfwd::fwd {

namespace {
// Leases only while staging has room for more than a small file.
constexpr long long kLeaseMinBudget = 1 << 20;
}  // namespace

void Service::make_lease(ClientCtx& cl) {
  if (!cl.lease_due || !cl.wants_leases || !cl.release_after_reply || cl.peer || cl.fd < 0) return;
  cl.lease_due = false;
  if (cl.lease_made.vid || cl.leases.size() >= ClientCtx::kLeasesAhead) return;
  long long budget = stage_budget();
  if (budget >= 0 && budget < kLeaseMinBudget) return;
  if (!c_.fates.claim_file_ready() || !c_.state.journal.writable()) return;
  uint64_t vid;
  {
    std::lock_guard lk(c_.state.mu);
    vid = c_.state.next_vid++;
  }
  // The staged file, and "lease" in the journal (wire/lease.h): written with this
  // session's next replies, before the one that hands it over (client_session.cc).
  std::string err;
  const std::string data = staged_data_path(c_.session_dir, vid);
  int fd = create_staged(data, &err);
  if (fd >= 0) ::close(fd);
  if (fd < 0 || !c_.state.journal.record(vid, wire::kLeaseMeta)) {
    if (fd >= 0) ::unlink(data.c_str());
    LOG_DEBUG("no lease for pid %ld: %s", cl.pid, fd < 0 ? err.c_str() : "journal not writable");
    return;
  }
  cl.lease_made = {vid};
  if (!cl.pipelined) cl.pipelined = pipelined_.join(cl.fd);
}

void Service::hand_over_lease(ClientCtx& cl, Reply& r) {
  if (!cl.lease_made.vid || cl.leases.size() >= ClientCtx::kLeasesAhead || r.empty() ||
      r[0] != wire::kOk)
    return;
  wire::Lease l;
  l.vid = cl.lease_made.vid;
  l.budget = stage_budget();
  l.pid = c_.fates.pid();
  char field[96];
  if (!wire::format_lease(l, field, sizeof(field))) return;
  r.emplace_back(field);
  cl.leases_unsent.push_back(l.vid);
  cl.leases.push_back(std::exchange(cl.lease_made, {}));
}

void Service::withdraw_lease(ClientCtx& cl, Reply& r) {
  wire::Lease l;
  if (r.size() < 2 || r[0] != wire::kOk || !wire::parse_lease(r.back().c_str(), l)) return;
  // (a LIST's last name may look like a lease)
  auto unsent = std::find(cl.leases_unsent.begin(), cl.leases_unsent.end(), l.vid);
  if (unsent == cl.leases_unsent.end()) return;
  cl.leases_unsent.erase(unsent);
  r.pop_back();
  for (auto it = cl.leases.begin(); it != cl.leases.end(); ++it)
    if (it->vid == l.vid) {
      cl.leases.erase(it);
      break;
    }
  ::unlink(staged_data_path(c_.session_dir, l.vid).c_str());
  c_.state.journal.gone(l.vid);
}

void Service::drop_leases(ClientCtx& cl) {
  // Never used: no OPEN came for them on this connection, which is over.
  cl.leases.push_back(std::exchange(cl.lease_made, {}));
  for (ClientCtx::LeaseFiles& l : cl.leases) {
    if (!l.vid) continue;
    ::unlink(staged_data_path(c_.session_dir, l.vid).c_str());
    c_.state.journal.gone(l.vid);
  }
  cl.leases.clear();
  if (cl.pipelined) pipelined_.leave(cl.pipelined);
  cl.pipelined = nullptr;
}

void Service::forget_leased(uint64_t vid) {
  if (Version* v = c_.state.find(vid)) {
    v->data_path.clear();  // the client's fallback copies it from there: not removed,
    v->journaled = false;  // and a recovery leaves it to the client ("lease" stays)
  }
  c_.state.journal.keep_for_client(vid);
  c_.state.forget(vid);
}

Reply Service::open_leased(ClientCtx& cl, const std::string& path, int flags, unsigned mode,
                           uint64_t vid, bool seen_new) {
  bool ours = false;
  for (auto it = cl.leases.begin(); vid != 0 && it != cl.leases.end(); ++it)
    if (it->vid == vid) {
      ours = true;
      cl.leases.erase(it);
      break;
    }
  const bool fits = ours && (flags & O_ACCMODE) != O_RDONLY && (flags & O_TRUNC) &&
                    (flags & O_CREAT) && !(flags & O_EXCL);
  // A lease of this connection that makes no version here: its "lease" stays in the
  // journal for the client's fallback, until that took the staged file away.
  struct KeepUnlessMade {
    LeaseJournalWriter* journal;
    uint64_t vid;
    bool made = false;
    ~KeepUnlessMade() {
      if (journal && !made) journal->keep_for_client(vid);
    }
  } keep{ours ? &c_.state.journal : nullptr, vid};
  if (!cl.peer) c_.gate.note_write(monotonic_ns());
  if (test_hooks().before_leased_open) test_hooks().before_leased_open();
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  bool preparing = false;
  // Every other session's request waits while this one is acted on (pipelined_sessions.h):
  // no opener here gets in between, even while the lock is released below.
  const bool held = s.open_for_write(path, &preparing) || preparing;
  if (!fits || held) {
    // Not a lease of this connection, or the claim was not the client's to make: no
    // version; the client's CLOSE falls back to the real path.
    LOG_WARN("leased OPEN of %s (v%llu) from pid %ld refused: %s", path.c_str(),
             static_cast<unsigned long long>(vid), cl.pid,
             !fits ? "not this connection's lease, or flags without O_CREAT|O_TRUNC"
                   : "the path is open for writing here already");
    // The client's claim goes (a fate file that is no link of our claim file stays).
    if (!held && c_.fates.adopt_claim(path)) c_.fates.release_staged(path);
    return reply_err(EINVAL);
  }
  if (!c_.fates.adopt_claim(path)) {
    LOG_WARN("leased OPEN of %s (v%llu) from pid %ld refused: its fate was not claimed",
             path.c_str(), static_cast<unsigned long long>(vid), cl.pid);
    return reply_err(EINVAL);
  }
  auto refuse = [&](Reply r) {
    if (!s.open_for_write(path, &preparing)) c_.fates.release_staged(path);
    LOG_WARN(
        "leased OPEN of %s (v%llu) from pid %ld failed (%s %s): the client writes it to "
        "the real path at its close",
        path.c_str(), static_cast<unsigned long long>(vid), cl.pid, r[0].c_str(),
        r.size() > 1 ? r[1].c_str() : "");
    return r;
  };
  // As open_write: another node's path (a copy of its owner's bytes, none with O_TRUNC),
  // or a version another node closed and has not committed yet waited for.
  if (group_) {
    Version* n = s.newest(path);
    // (a copy of another node's version is journaled there too)
    if (!n || !n->owner_addr.empty())
      if (std::optional<Reply> r = open_at_owner(lk, cl, path, flags, mode, vid)) {
        keep.made = r->size() > 1 && (*r)[0] == wire::kOk && (*r)[1] == std::to_string(vid);
        return keep.made ? *r : refuse(*r);
      }
  }
  if (!s.newest(path) && !s.open_for_write(path, &preparing) && !preparing)
    await_other_nodes(lk, path);
  if (s.open_for_write(path, &preparing) || preparing) return refuse(reply_err(EBUSY));
  WriteSource src;
  src.store = store_for(c_.cfg, path);
  src.seen_new = seen_new;
  if (std::optional<Reply> r = find_write_source(path, src)) return refuse(*r);
  if (std::optional<Reply> r = refuse_write_open(path, flags, false, src)) return refuse(*r);
  Version& v = add_write_version(cl, path, mode, false, false, src, vid);
  keep.made = true;
  // Described as "lease" in the journal until its CLOSE (or fsync): a crash meanwhile
  // leaves its client to write the real path from the staged file, which a recovery
  // leaves be. No .meta.
  v.journaled = true;
  v.meta_path.clear();
  c_.stats.leased_opens++;
  LOG_DEBUG("open %s for writing: leased v%llu", path.c_str(),
            static_cast<unsigned long long>(vid));
  return reply_ok(
      {std::to_string(vid), v.data_path, std::to_string(stage_budget()), v.created ? "x" : "-"});
}

}  // namespace ckptfwd::fwd
