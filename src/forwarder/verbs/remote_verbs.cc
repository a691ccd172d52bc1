// The forwarder group's verbs (forwarder/group/group.h): a path written from more than one
// node is staged and committed by its owner only. On the other nodes a write open stages
// a copy of the owner's bytes (ATTACH), the writers write it as any staged file, and the
// last close hands the bytes they wrote, by their extents, to the owner (MERGE), which
// writes them into its own version before the CLOSE returns: an open anywhere after that
// sees them (close-to-open), and the store gets one version per close, in one order.
// A read open of a path another node owns gets the owner's newest bytes (READ).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "forwarder/group/messages.h"
#include "forwarder/staging/extents.h"
#include "forwarder/staging/staging.h"
#include "forwarder/state/fate_file.h"
#include "forwarder/util/log.h"
#include "forwarder/util/store_paths.h"
#include "forwarder/verbs/peer_reply.h"
#include "forwarder/verbs/service.h"
#include "store/manifest/manifest.h"
#include "store/manifest/manifest_record.h"
#include "store/manifest/owner_check.h"

namespace ckptfwd::fwd {
namespace {

using group::Frame;

constexpr uint64_t kPeerIdBase = 1ull << 62;  // peers' ClientCtx ids: never a local client's
constexpr uint64_t kMaxMergeExtents = 1u << 22;
constexpr uint64_t kMaxAppendBytes = 64ull << 20;

using manifest_record::parse_u64;  // the MANIFEST's decimal fields: digits only, no overflow
using peer_reply::errno_of;
using peer_reply::send_errno;
constexpr auto* send_reply = &peer_reply::send;

// Sends the reply head with the staged file `data` as its body (with_bytes: all of it,
// else none); an unreadable file is EIO. False when the connection failed.
bool send_staged(int sock, const std::string& data, std::vector<std::string> head,
                 bool with_bytes) {
  int fd = ::open(data.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    int e = errno;
    if (fd >= 0) ::close(fd);
    LOG_ERROR("group: cannot read staged %s for a peer: %s", data.c_str(), strerror(e));
    return send_errno(sock, EIO);
  }
  std::vector<group::Range> body;
  if (with_bytes && st.st_size > 0) body.push_back({0, static_cast<uint64_t>(st.st_size)});
  std::string err;
  bool ok = group::send_frame(sock, Frame{std::move(head), {}}, &err, fd, body);
  ::close(fd);
  return ok;
}

}  // namespace

// ---- the owner's side ----

ClientCtx& Service::peer_ctx(const std::string& node) {
  std::lock_guard lk(c_.state.mu);
  auto [it, fresh] = peers_.try_emplace(node);
  if (fresh) {
    static std::atomic<uint64_t> next{kPeerIdBase};
    it->second.id = next++;
    it->second.pid = -1;
    it->second.peer = true;
  }
  return it->second;
}

bool Service::serve_peer(const std::string& node, int sock, const Frame& head, uint64_t body_len) {
  const std::string& verb = head.fields[0];
  std::string err;
  if (verb == "MERGE") return peer_merge(peer_ctx(node), sock, head, body_len);
  if (verb == "APPEND") return peer_append(sock, head, body_len);
  if (body_len && !group::skip_body(sock, body_len, &err)) return false;
  if (verb == "ATTACH") return peer_attach(peer_ctx(node), sock, head);
  if (verb == "READ") return peer_read(sock, head);
  if (verb == "STAT") return peer_stat(sock, head);
  if (verb == "WAIT") return peer_wait(sock, head);
  if (verb == "UNLINK") return peer_unlink(sock, head);
  if (verb == "RENAME") return peer_rename(sock, head);
  if (verb == "SUPERSEDE") return peer_supersede(sock, head);
  if (verb == "NAMES") return peer_names(sock, head);
  LOG_WARN("group: %s sent an unknown request '%s'", node.c_str(), verb.c_str());
  return false;
}

void Service::peer_gone(const std::string& node) {
  ClientCtx cl;
  {
    std::lock_guard lk(c_.state.mu);
    auto it = peers_.find(node);
    if (it == peers_.end()) return;
    cl = it->second;
    peers_.erase(it);
  }
  // What its writers still had open is closed as they left it, as for a killed rank.
  c_.state.mu.lock();
  c_.state.clients++;  // disconnect() counts a client going away
  c_.state.mu.unlock();
  disconnect(cl);
}

bool Service::peer_attach(ClientCtx& cl, int sock, const Frame& head) {
  uint64_t flags = 0, mode = 0;
  if (head.fields.size() != 4 || !peer_reply::is_path(head.fields[1]) ||
      !parse_u64(head.fields[2], flags) || !parse_u64(head.fields[3], mode))
    return send_errno(sock, EINVAL);
  const std::string& path = head.fields[1];
  Reply r = open(cl, path, static_cast<int>(flags), static_cast<unsigned>(mode & 07777), false);
  if (r.empty() || r[0] != wire::kOk) {
    if (!r.empty() && r[0] == wire::kPass) return send_reply(sock, {"PASS"});
    return send_errno(sock, errno_of(r, 1));
  }
  uint64_t vid = 0;
  parse_u64(r[1], vid);
  uint32_t vmode = 0644;
  {
    std::lock_guard lk(c_.state.mu);
    if (Version* v = c_.state.find(vid)) vmode = v->mode;
  }
  // Its bytes as they are now (an O_TRUNC open starts from none): the peer's writers
  // start from them; the owner's own writers may go on writing meanwhile, and the peer
  // hands back only the bytes its writers wrote. (The peer closes nothing on an error:
  // its connection's end does.)
  char m[16];
  snprintf(m, sizeof(m), "%o", vmode);
  return send_staged(sock, r[2], {"OK", r[1], m}, !(flags & O_TRUNC));
}

bool Service::peer_merge(ClientCtx& cl, int sock, const Frame& head, uint64_t body_len) {
  std::string err;
  uint64_t vid = 0, size = 0, final = 0, n = 0;
  if (head.fields.size() != 5 || !parse_u64(head.fields[1], vid) ||
      !parse_u64(head.fields[2], size) || !parse_u64(head.fields[3], final) ||
      !parse_u64(head.fields[4], n) || n > kMaxMergeExtents || n * 16 > body_len ||
      size > kMaxExtentEnd) {
    return group::skip_body(sock, body_len, &err) && send_errno(sock, EINVAL);
  }
  std::string pairs;
  if (!group::recv_body(sock, n * 16, pairs, n * 16, &err)) return false;
  group::ExtentPairs got;
  uint64_t sum = 0;
  const bool valid = group::decode_extents(pairs, n, kMaxExtentEnd, got, &sum);
  Extents ext;
  for (const auto& [b, e] : got) ext.push_back({b, e});
  const uint64_t rest = body_len - n * 16;
  if (!valid || sum != rest) return group::skip_body(sock, rest, &err) && send_errno(sock, EINVAL);
  std::string data;
  bool tracks = false;
  {
    std::lock_guard lk(c_.state.mu);
    Version* v = c_.state.find(vid);
    if (v && v->state == VState::kOpen && v->holders.count(cl.id)) {
      data = v->data_path;
      tracks = v->partial || v->created;
    }
  }
  if (data.empty()) {
    LOG_WARN("group: MERGE of v%llu, which that peer does not hold here",
             static_cast<unsigned long long>(vid));
    return group::skip_body(sock, rest, &err) && send_errno(sock, ESTALE);
  }
  int fd = ::open(data.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return group::skip_body(sock, rest, &err) && send_errno(sock, e);
  }
  for (const Extent& e : ext)
    if (!group::recv_body_to_fd(sock, e.end - e.begin, fd, e.begin, &err)) {
      ::close(fd);
      LOG_ERROR("group: MERGE into v%llu cut off: %s", static_cast<unsigned long long>(vid),
                err.c_str());
      return false;  // the peer's writers' bytes: the peer commits them itself
    }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) < size &&
      ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int e = errno;
    ::close(fd);
    return send_errno(sock, e);
  }
  ::close(fd);
  // The extents of a version that tracks them (a new file, or one shared through MPI-IO):
  // a file of the version's own, taken in by the CLOSE or SYNC as a writer's.
  std::string ext_name;
  if (tracks && !ext.empty()) {
    static std::atomic<uint64_t> seq{0};
    ext_name = extents_file_name(vid, ::getpid(), seq++ + (1ull << 40));
    if (!write_extents_file(c_.session_dir + "/" + ext_name, ext, &err)) {
      LOG_ERROR("group: %s", err.c_str());
      return send_errno(sock, EIO);
    }
  }
  Reply r = final ? close(cl, vid, size, ext_name) : sync(cl, vid, ext_name);
  if (!r.empty() && r[0] == wire::kOk) return send_reply(sock, {"OK"});
  return send_errno(sock, errno_of(r, 1));
}

bool Service::peer_read(int sock, const Frame& head) {
  if (head.fields.size() != 2 || !peer_reply::is_path(head.fields[1]))
    return send_errno(sock, EINVAL);
  Reply r = open_read(head.fields[1], true);
  if (r.empty() || r[0] != wire::kOk) {
    if (!r.empty() && r[0] == wire::kPass) return send_reply(sock, {"PASS"});
    return send_errno(sock, errno_of(r, 1));
  }
  return send_staged(sock, r[2], {"OK", r.size() > 5 ? r[5] : "644"}, true);
}

bool Service::peer_stat(int sock, const Frame& head) {
  if (head.fields.size() != 2 || !peer_reply::is_path(head.fields[1]))
    return send_errno(sock, EINVAL);
  Reply r = stat(head.fields[1], true);
  if (r.empty() || r[0] == wire::kPass) return send_reply(sock, {"PASS"});
  if (r[0] != wire::kOk || r.size() != 5) return send_errno(sock, errno_of(r, 1));
  return send_reply(sock, {"OK", r[1], r[2], r[3], r[4]});
}

bool Service::peer_wait(int sock, const Frame& head) {
  uint64_t vid = 0;
  if (head.fields.size() != 2 || !parse_u64(head.fields[1], vid)) return send_errno(sock, EINVAL);
  int rc;
  {
    std::unique_lock lk(c_.state.mu);
    rc = wait_committed(lk, {vid});
  }
  return rc ? send_errno(sock, rc) : send_reply(sock, {"OK"});
}

// ---- the single MANIFEST appender ----

void Service::set_group(group::Group* g) {
  group_ = g;
  manifest::set_append_route(g ? &Service::route_append : nullptr, this);
}

bool Service::peer_append(int sock, const Frame& head, uint64_t body_len) {
  std::string err, body;
  uint64_t known_end = 0, n = 0;
  if (!group::recv_body(sock, body_len, body, kMaxAppendBytes, &err)) return false;
  if (head.fields.size() != 4 || !peer_reply::is_path(head.fields[1]) ||
      !parse_u64(head.fields[2], known_end) || !parse_u64(head.fields[3], n))
    return send_reply(sock, {"ERR", "malformed APPEND"});
  const std::string& store = head.fields[1];
  // Only a store of this user's: the peer showed the job's secret, but the path is its word.
  if (!check_store_dir(store, &err)) return send_reply(sock, {"ERR", err});
  manifest::Records records;
  if (!group::decode_records(body, n, records))
    return send_reply(sock, {"ERR", "malformed APPEND records"});
  group_->await_takeover_settled();
  uint64_t end = 0;
  if (!manifest::append_here(store, records, known_end, &end, &err)) {
    LOG_ERROR("cannot append a member's records to %s/MANIFEST: %s", store.c_str(), err.c_str());
    return send_reply(sock, {"ERR", err});
  }
  return send_reply(sock, {"OK", std::to_string(end)});
}

manifest::Routed Service::route_append(void* self, const std::string& store,
                                       const manifest::Records& records, uint64_t known_end,
                                       uint64_t* end, std::string* err) {
  group::Group* g = static_cast<Service*>(self)->group_;
  const std::string addr = g ? g->leader_addr() : std::string();
  if (addr.empty()) {  // leading, or not joined: appended here
    if (g) g->await_takeover_settled();
    return manifest::Routed::kNotRouted;
  }
  // What this client shows of the MANIFEST now: the leader can only append these records
  // after it (below: where to look for them if it does not answer).
  struct stat st {};
  const uint64_t before =
      ::stat((store + "/MANIFEST").c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  std::string why;
  int sock = g->connect_peer(addr, &why);
  Frame reply;
  bool ok = sock >= 0 &&
            group::send_frame(
                sock,
                Frame{{"APPEND", store, std::to_string(known_end), std::to_string(records.size())},
                      group::encode_records(records)},
                &why) &&
            group::recv_frame(sock, reply, 0, &why) && !reply.fields.empty();
  g->release_peer(addr, sock, ok);
  if (!ok) {
    // Not answered: the leader died meanwhile, maybe after it appended them. Appended here
    // unless they are there: once this client shows what the leader appended last (a
    // caching client may lag, as for a leader that takes over), and with them never twice.
    LOG_WARN(
        "cannot hand MANIFEST records of %s to the group's leader at %s (%s): appending them "
        "here unless it did",
        store.c_str(), addr.c_str(), why.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(group::Group::kTakeoverGraceMs));
    return manifest::append_here(store, records, std::max(known_end, before), end, err,
                                 /*unless_there=*/true)
               ? manifest::Routed::kDone
               : manifest::Routed::kFailed;
  }
  if (reply.fields[0] == "OK" && reply.fields.size() == 2 && parse_u64(reply.fields[1], *end))
    return manifest::Routed::kDone;
  if (err)
    *err = "the group's leader refused the records: " +
           (reply.fields.size() > 1 ? reply.fields[1] : reply.fields[0]);
  return manifest::Routed::kFailed;
}

// ---- the writer's side ----

namespace {
// An owner that cannot be reached may have died: the leader then says so (group.h) and
// the next ask waits for its node's next forwarder. Asked again until then, this long.
constexpr auto kUnreachableFor = std::chrono::milliseconds(group::Group::kOwnerDeathWaitMs);
constexpr auto kAskAgainAfter = std::chrono::milliseconds(100);
}  // namespace

std::optional<Reply> Service::open_at_owner(std::unique_lock<std::mutex>& lk, ClientCtx& cl,
                                            const std::string& path, int flags, unsigned mode,
                                            uint64_t leased) {
  lk.unlock();
  std::optional<Reply> r = ask_owner_again(path, "staging it", [&](Unreachable* unreachable) {
    lk.lock();
    std::optional<Reply> once = open_at_owner_once(lk, cl, path, flags, mode, unreachable, leased);
    lk.unlock();
    return once;
  });
  lk.lock();
  return r;
}

std::optional<Reply> Service::open_at_owner_once(std::unique_lock<std::mutex>& lk, ClientCtx& cl,
                                                 const std::string& path, int flags, unsigned mode,
                                                 Unreachable* unreachable, uint64_t leased) {
  State& s = c_.state;
  lk.unlock();
  std::optional<group::Owner> owner = group_->claim(path);
  lk.lock();
  if (!owner || owner->self) return std::nullopt;
  // Looked at again after every wait: while this opener waited, another one here may have
  // attached, written, closed and begun handing its copy over.
  for (;;) {
    Version* n = s.newest(path);
    if (n && !n->owner_addr.empty() && n->state == VState::kCommitting) {
      s.done_cv.wait(lk);  // handed over right now: the owner has its bytes afterwards
      continue;
    }
    bool preparing = false;
    if (Version* joined = s.open_for_write(path, &preparing))  // another opener here attached
      return leased ? reply_err(EBUSY) : join_write(cl, *joined, flags, false);
    if (preparing) {
      s.done_cv.wait(lk);  // its first opener is attaching
      continue;
    }
    if (n) return std::nullopt;  // staged here after a failed hand-over
    break;
  }
  if (c_.fates.claim_staged(path) == fate::Fate::kDirect) return reply_pass();
  Version& v = s.add(path, cl.rank, cl.pid, cl.id, mode & 07777, leased);
  v.holders[cl.id] = {cl.pid, 1};
  v.partial = true;  // its writers hand over their extents: only those go to the owner
  v.owner_addr = owner->addr;
  v.ready = false;
  const uint64_t vid = v.vid;
  const std::string data = v.data_path;
  lk.unlock();

  std::string err;
  int rc = -1;  // -1: the owner was not reached
  uint64_t owner_vid = 0;
  uint32_t owner_mode = mode & 07777;
  int fd =
      leased ? ::open(data.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW) : create_staged(data, &err);
  if (fd < 0 && leased) err = errno_message("cannot open leased", data);
  int sock = fd >= 0 ? group_->connect_peer(owner->addr, &err) : -1;
  bool reusable = false;
  if (sock >= 0 &&
      group::send_frame(
          sock, Frame{{"ATTACH", path, std::to_string(flags), std::to_string(mode)}, {}}, &err)) {
    Frame reply;
    uint64_t len = 0;
    if (group::recv_head(sock, reply, &len, &err) && !reply.fields.empty()) {
      if (reply.fields[0] == "OK" && reply.fields.size() == 3 &&
          parse_u64(reply.fields[1], owner_vid)) {
        if (!manifest_record::parse_octal(reply.fields[2], owner_mode)) owner_mode = mode & 07777;
        owner_mode &= 07777;
        if (leased && len > 0) {  // the application writes that file already
          reusable = group::skip_body(sock, len, &err);
          rc = EBUSY;
        } else {
          rc = group::recv_body_to_fd(sock, len, fd, 0, &err) ? 0 : -1;
          reusable = rc == 0;
        }
      } else if (group::skip_body(sock, len, &err)) {
        reusable = true;
        rc = reply.fields[0] == "PASS" ? -2 : errno_of(reply.fields, 1);
      }
    }
  }
  group_->release_peer(owner->addr, sock, reusable);
  if (fd >= 0) ::close(fd);
  lk.lock();
  Version* nv = s.find(vid);
  if (rc != 0 || !nv) {
    if (nv && leased)
      forget_leased(vid);
    else if (nv)
      s.forget(vid);
    c_.fates.release_staged(path);
    s.done_cv.notify_all();
    if (rc == -2) return reply_pass();  // the owner's node writes it directly
    if (rc > 0) return reply_err(rc);
    *unreachable = {owner->addr, owner->node + ": " + err};
    return std::nullopt;
  }
  nv->owner_vid = owner_vid;
  nv->mode = owner_mode;
  nv->ready = true;
  struct stat st;
  if (::stat(data.c_str(), &st) == 0) nv->start_size = static_cast<uint64_t>(st.st_size);
  if (leased) {  // described in the lease journal, where "lease" is (lease_journal_writer.h)
    nv->journaled = true;
    nv->meta_path.clear();
    s.rewrite_meta(*nv);
  } else if (!write_meta(nv->meta_path, meta_of(*nv), &err, MetaWrite::kFresh)) {
    LOG_WARN("cannot describe the staged copy of %s: %s", path.c_str(), err.c_str());
  }
  s.done_cv.notify_all();
  LOG_DEBUG("open %s for writing: v%llu, a copy of v%llu of its owner %s", path.c_str(),
            static_cast<unsigned long long>(vid), static_cast<unsigned long long>(owner_vid),
            owner->node.c_str());
  return reply_ok({std::to_string(vid), data, std::to_string(stage_budget()), "x"});
}

Version* Service::await_hand_over(std::unique_lock<std::mutex>& lk, const std::string& path) {
  State& s = c_.state;
  Version* n = s.newest(path);
  for (; n && !n->owner_addr.empty() && n->state == VState::kCommitting; n = s.newest(path))
    s.done_cv.wait(lk);
  return n;
}

int Service::hand_to_owner(std::unique_lock<std::mutex>& lk, uint64_t vid, bool final) {
  State& s = c_.state;
  Version* v = s.find(vid);
  if (!v || v->owner_addr.empty()) return -1;
  Extents ext = v->extents;
  const bool unknown = v->extents_unknown;
  const std::string addr = v->owner_addr, data = v->data_path, path = v->path;
  const uint64_t owner_vid = v->owner_vid;
  // Its last close: no batch takes it, and no opener here starts from it, while it is
  // handed over (an fsync's hand-over leaves it open to its writers).
  const VState was = v->state;
  if (final) v->state = VState::kCommitting;
  lk.unlock();
  std::string err;
  int rc = -1;
  int fd = ::open(data.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && ::fstat(fd, &st) == 0) {
    if (unknown) {
      LOG_WARN(
          "%s: a writer closed it without its extents; handing the staged file's data "
          "extents to its owner, which may cover bytes other nodes wrote",
          path.c_str());
      data_extents_of(data, ext, &err);
    }
    ext = extents_clip(ext, static_cast<uint64_t>(st.st_size));
    group::ExtentPairs pairs;
    std::vector<group::Range> ranges;
    for (const Extent& e : ext) {
      pairs.emplace_back(e.begin, e.end);
      ranges.push_back({e.begin, e.end - e.begin});
    }
    int sock = group_->connect_peer(addr, &err);
    bool reusable = false;
    Frame req{{"MERGE", std::to_string(owner_vid), std::to_string(st.st_size), final ? "1" : "0",
               std::to_string(ext.size())},
              group::encode_extents(pairs)};
    Frame reply;
    if (sock >= 0 && group::send_frame(sock, req, &err, fd, ranges) &&
        group::recv_frame(sock, reply, 0, &err) && !reply.fields.empty()) {
      reusable = true;
      rc = reply.fields[0] == "OK" ? 0 : errno_of(reply.fields, 1);
    }
    group_->release_peer(addr, sock, reusable);
  } else {
    err = "cannot read " + data + ": " + strerror(errno);
  }
  if (fd >= 0) ::close(fd);
  lk.lock();
  v = s.find(vid);
  if (v) v->state = was;
  s.done_cv.notify_all();
  if (rc < 0) {
    LOG_WARN("cannot hand %s to its owner at %s (%s): committing this node's bytes of it here",
             path.c_str(), addr.c_str(), err.c_str());
    if (v) v->owner_addr.clear();
  }
  return rc;
}

int Service::wait_owners(std::unique_lock<std::mutex>& lk, const std::vector<uint64_t>& vids) {
  std::vector<HandedOver> waits;
  for (uint64_t vid : vids)
    if (auto it = handed_.find(vid); it != handed_.end()) {
      waits.push_back(it->second);
      handed_.erase(it);
    }
  if (waits.empty()) return 0;
  lk.unlock();
  int rc = 0;
  for (const HandedOver& w : waits) {
    std::string err;
    int sock = group_->connect_peer(w.addr, &err);
    Frame reply;
    bool ok = sock >= 0 &&
              group::send_frame(sock, Frame{{"WAIT", std::to_string(w.vid)}, {}}, &err) &&
              group::recv_frame(sock, reply, 0, &err) && !reply.fields.empty();
    group_->release_peer(w.addr, sock, ok);
    if (!ok) {
      LOG_ERROR("cannot learn from %s whether it committed what this node handed it: %s",
                w.addr.c_str(), err.c_str());
      rc = EIO;
    } else if (reply.fields[0] != "OK") {
      rc = errno_of(reply.fields, 1);
    }
  }
  lk.lock();
  return rc;
}

std::optional<Reply> Service::read_at_owner(const std::string& path) {
  return ask_owner_again(path, "reading it", [&](Unreachable* unreachable) {
    return read_at_owner_once(path, unreachable);
  });
}

std::optional<Reply> Service::stat_at_owner(const std::string& path) {
  return ask_owner_again(path, "reading it", [&](Unreachable* unreachable) {
    return stat_at_owner_once(path, unreachable);
  });
}

std::optional<Reply> Service::ask_owner_again(
    const std::string& path, const char* fallback,
    const std::function<std::optional<Reply>(Unreachable*)>& once) {
  const auto until = std::chrono::steady_clock::now() + kUnreachableFor;
  for (;;) {
    Unreachable unreachable;
    std::optional<Reply> r = once(&unreachable);
    if (unreachable.addr.empty()) return r;
    // An owner given up on a moment ago (after a whole wait) is not waited for again.
    const std::string& addr = unreachable.addr;
    const auto now = std::chrono::steady_clock::now();
    bool gave_up;
    {
      std::lock_guard lk(c_.state.mu);
      auto it = gave_up_on_.find(addr);
      gave_up = it != gave_up_on_.end() && now < it->second + kUnreachableFor;
      if (!gave_up && now >= until) gave_up_on_[addr] = now;
    }
    if (gave_up || now >= until) {
      LOG_WARN("cannot reach %s's owner for %lld s (%s, %s): %s on this node", path.c_str(),
               static_cast<long long>(kUnreachableFor.count() / 1000), addr.c_str(),
               unreachable.why.c_str(), fallback);
      return std::nullopt;
    }
    std::this_thread::sleep_for(kAskAgainAfter);
  }
}

std::optional<Reply> Service::stat_at_owner_once(const std::string& path,
                                                 Unreachable* unreachable) {
  std::optional<group::Owner> owner = group_->who(path);
  Frame reply;
  if (!owner || owner->self || !ask_peer(*owner, {"STAT", path}, reply, unreachable))
    return std::nullopt;
  if (reply.fields[0] == "PASS") return std::nullopt;  // the owner has no version of it
  if (reply.fields[0] == "OK" && reply.fields.size() == 5)
    return reply_ok({reply.fields[1], reply.fields[2], reply.fields[3], reply.fields[4]});
  return reply_err(errno_of(reply.fields, 1));
}

std::optional<Reply> Service::read_at_owner_once(const std::string& path,
                                                 Unreachable* unreachable) {
  std::optional<group::Owner> owner = group_->who(path);
  if (!owner || owner->self) return std::nullopt;
  static std::atomic<uint64_t> seq{0};
  const std::string view =
      read_view_path(c_.session_dir, "group:" + owner->node, path, static_cast<uint32_t>(seq++));
  std::string err;
  int sock = group_->connect_peer(owner->addr, &err);
  int rc = -1;
  bool reusable = false;
  std::string mode = "644";
  if (sock >= 0 && group::send_frame(sock, Frame{{"READ", path}, {}}, &err)) {
    Frame reply;
    uint64_t len = 0;
    if (group::recv_head(sock, reply, &len, &err) && !reply.fields.empty()) {
      if (reply.fields[0] == "OK" && reply.fields.size() == 2) {
        mode = reply.fields[1];
        int fd = create_staged(view, &err);
        rc = fd >= 0 && group::recv_body_to_fd(sock, len, fd, 0, &err) ? 0 : -1;
        reusable = rc == 0;
        if (fd >= 0) ::close(fd);
      } else if (group::skip_body(sock, len, &err)) {
        reusable = true;
        rc = reply.fields[0] == "PASS" ? -2 : errno_of(reply.fields, 1);
      }
    }
  }
  group_->release_peer(owner->addr, sock, reusable);
  if (rc != 0) ::unlink(view.c_str());
  if (rc == -2) return std::nullopt;  // the owner has no version of it: read it here
  if (rc > 0) return reply_err(rc);
  if (rc < 0) {
    *unreachable = {owner->addr, owner->node + ": " + err};
    return std::nullopt;
  }
  std::lock_guard lk(c_.state.mu);
  c_.state.serve_view(view, false);  // deleted after the view grace, like a restored view
  return reply_ok({"0", view, "-1", "-", mode});
}

}  // namespace ckptfwd::fwd
