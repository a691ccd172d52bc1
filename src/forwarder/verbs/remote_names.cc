// The name space of paths another node owns (forwarder/group/group.h): an UNLINK or a
// RENAME of a file another node's writers staged is done by that node's forwarder, the
// only one that commits the path, so the store never gets an unlink or a rename followed
// by an older version the owner committed after it (the file back, or the old bytes under
// the new name). A rename onto a path another node owns takes the path over: the leader
// makes this node its owner, and the old owner drops its versions (SUPERSEDE), which the
// rename replaces, before the rename is recorded. A directory listing adds the names of
// the files other nodes own there and have not committed yet (NAMES).
//
// POSIX has the same answer on every node once the call returns: the owner answered
// before the caller's unlink or rename returns. A writer of another node that still has
// the file open writes into the owner's version, as into an unlinked or renamed file.
#include <set>
#include <string>

#include "forwarder/commit/manifest_turn.h"
#include "forwarder/util/log.h"
#include "forwarder/util/store_paths.h"
#include "forwarder/verbs/peer_reply.h"
#include "forwarder/verbs/service.h"

namespace ckptfwd::fwd {

using group::Frame;

bool Service::ask_peer(const group::Owner& owner, std::vector<std::string> fields, Frame& reply,
                       Unreachable* unreachable, uint64_t max_body) {
  std::string err;
  int sock = group_->connect_peer(owner.addr, &err);
  bool ok = sock >= 0 && group::send_frame(sock, Frame{std::move(fields), {}}, &err) &&
            group::recv_frame(sock, reply, max_body, &err) && !reply.fields.empty();
  group_->release_peer(owner.addr, sock, ok);
  if (!ok) *unreachable = {owner.addr, owner.node + ": " + err};
  return ok;
}

// ---- the caller's side ----

std::optional<Reply> Service::done_at_owner(const std::string& path, const char* fallback,
                                            std::vector<std::string> request) {
  return ask_owner_again(path, fallback, [&](Unreachable* u) -> std::optional<Reply> {
    std::optional<group::Owner> owner = group_->who(path);
    Frame reply;
    if (!owner || owner->self || !ask_peer(*owner, request, reply, u)) return std::nullopt;
    if (reply.fields[0] == "PASS") return std::nullopt;  // nothing of it there: done here
    if (reply.fields[0] != "OK") return reply_err(peer_reply::errno_of(reply.fields, 1));
    return done_or_pass(path);
  });
}

void Service::take_name(const std::string& path) {
  std::optional<group::Owner> previous = group_->take(path);
  if (!previous || previous->self) return;
  Frame reply;
  Unreachable u;
  if (ask_peer(*previous, {"SUPERSEDE", path}, reply, &u) && reply.fields[0] == "OK") return;
  LOG_WARN(
      "a rename here replaces %s, but its owner could not be told to drop its versions (%s): a "
      "version it closed before the rename may be committed after it",
      path.c_str(), u.addr.empty() ? reply.fields[0].c_str() : u.why.c_str());
}

void Service::names_at_owners(const std::string& dir, std::set<std::string>& names) {
  const std::string prefix = (dir == "/" ? "" : dir) + "/";
  for (const group::Owner& owner : group_->owners_under(prefix)) {
    Frame reply;
    Unreachable u;
    if (!ask_peer(owner, {"NAMES", dir}, reply, &u, wire::kMaxReplyFrame) ||
        reply.fields[0] != "OK") {
      LOG_WARN("cannot list %s's files in %s that are not on the store yet (%s): not listed",
               owner.node.c_str(), dir.c_str(), u.why.c_str());
      continue;
    }
    for (size_t b = 0; b < reply.body.size();) {  // NUL-terminated names
      size_t e = reply.body.find('\0', b);
      if (e == std::string::npos) break;
      if (e > b) names.insert(reply.body.substr(b, e - b));
      b = e + 1;
    }
  }
}

void Service::drop_own_versions(const std::string& path) {
  std::lock_guard lk(c_.state.mu);
  // Versions this node would commit itself (after a failed hand-over); the copies of the
  // owner's version hand their bytes to it, where they meet its unlink.
  c_.state.drop_all(path, [](const Version& v) { return v.owner_addr.empty(); });
}

// ---- the owner's side ----

namespace {
// A name verb's reply to its caller: its errno, or whether it acted here (OK) or found
// nothing of the path (PASS: the caller does it on its own node).
bool send_acted(int sock, const Reply& r, bool acted) {
  if (r.empty() || (r[0] != wire::kOk && r[0] != wire::kPass))
    return peer_reply::send_errno(sock, peer_reply::errno_of(r, 1));
  return peer_reply::send(sock, {acted ? "OK" : "PASS"});
}
}  // namespace

bool Service::peer_unlink(int sock, const Frame& head) {
  if (head.fields.size() != 2 || !peer_reply::is_path(head.fields[1]))
    return peer_reply::send_errno(sock, EINVAL);
  bool acted = false;
  Reply r = unlink_here(head.fields[1], &acted);
  return send_acted(sock, r, acted);
}

bool Service::peer_rename(int sock, const Frame& head) {
  if (head.fields.size() != 3 || !peer_reply::is_path(head.fields[1]) ||
      !peer_reply::is_path(head.fields[2]))
    return peer_reply::send_errno(sock, EINVAL);
  bool acted = false;
  Reply r = rename(head.fields[1], head.fields[2], true, &acted);
  return send_acted(sock, r, acted);
}

bool Service::peer_names(int sock, const Frame& head) {
  if (head.fields.size() != 2 || !peer_reply::is_path(head.fields[1]))
    return peer_reply::send_errno(sock, EINVAL);
  const std::string& dir = head.fields[1];
  Frame reply{{"OK"}, {}};
  std::lock_guard lk(c_.state.mu);
  // The versions this node commits (not copies of another node's).
  for (auto& [vid, v] : c_.state.versions)
    if (!v.dropped && v.owner_addr.empty() && dirname_of(v.path) == dir) {
      const std::string name = basename_of(v.path);
      if (reply.body.size() + name.size() + 1 > wire::kMaxReplyFrame - 64) break;
      reply.body += name;
      reply.body += '\0';
    }
  std::string err;
  return group::send_frame(sock, reply, &err);
}

bool Service::peer_supersede(int sock, const Frame& head) {
  if (head.fields.size() != 2 || !peer_reply::is_path(head.fields[1]))
    return peer_reply::send_errno(sock, EINVAL);
  const std::string& path = head.fields[1];
  group_->disown(path);
  State& s = c_.state;
  std::unique_lock lk(s.mu);
  // Records in flight that name the path go in first: the rename's record comes after.
  ManifestTurn turn(s, lk, {store_for(c_.cfg, path)});
  const size_t dropped = s.drop_all(path);
  LOG_DEBUG("%s: another node renamed a file onto it; %zu versions here dropped", path.c_str(),
            dropped);
  return peer_reply::send(sock, {"OK"});
}

}  // namespace ckptfwd::fwd
