#include "forwarder/group/group.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "forwarder/util/log.h"

namespace ckptfwd::fwd::group {
namespace {

constexpr int kConnectMs = 2000;
constexpr int kHelloMs = 5000;
constexpr uint64_t kMaxAdoptBytes = 256ull << 20;

void set_timeout(int fd, int ms) {
  timeval tv{ms / 1000, (ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

void no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// The IPv4 address of host ("" for this host's name); false when it does not resolve.
bool resolve(const std::string& host, in_addr* out) {
  std::string name = host;
  if (name.empty()) {
    char h[256] = {};
    if (gethostname(h, sizeof(h) - 1) != 0) return false;
    name = h;
  }
  if (inet_pton(AF_INET, name.c_str(), out) == 1) return true;
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &res) != 0 || !res) return false;
  *out = reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
  freeaddrinfo(res);
  return true;
}

// Connects to "ip:port" within kConnectMs; -1 with *err.
int connect_raw(const std::string& addr, std::string* err) {
  size_t colon = addr.rfind(':');
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  int port = colon == std::string::npos ? 0 : atoi(addr.c_str() + colon + 1);
  if (port <= 0 || port > 65535 ||
      inet_pton(AF_INET, addr.substr(0, colon).c_str(), &sa.sin_addr) != 1) {
    if (err) *err = "not an address: '" + addr + "'";
    return -1;
  }
  sa.sin_port = htons(static_cast<uint16_t>(port));
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    if (err) *err = std::string("socket: ") + strerror(errno);
    return -1;
  }
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    rc = poll(&p, 1, kConnectMs) == 1 ? 0 : -1;
    int so = 0;
    socklen_t sl = sizeof(so);
    if (rc == 0 && (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) != 0 || so != 0)) {
      errno = so ? so : errno;
      rc = -1;
    } else if (rc != 0) {
      errno = ETIMEDOUT;
    }
  }
  if (rc != 0) {
    if (err) *err = "cannot connect to " + addr + ": " + strerror(errno);
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  no_delay(fd);
  return fd;
}

}  // namespace

bool Group::start(const Settings& s, std::string* err) {
  node_ = s.node;
  owned_ = s.owned;
  if (!rv_.open(s.dir, err)) return false;
  if (!listen_on(s.listen_host, err)) return false;
  accept_th_ = std::thread([this] { accept_loop(); });
  join_th_ = std::thread([this] { join_loop(); });
  return true;
}

bool Group::listen_on(const std::string& host, std::string* err) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  if (!resolve(host, &sa.sin_addr)) {
    if (!host.empty()) {
      if (err) *err = "CKPTFWD_GROUP_ADDR='" + host + "' does not resolve to an IPv4 address";
      return false;
    }
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);  // a host name that does not resolve
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 ||
      listen(fd, 128) != 0) {
    if (err) *err = std::string("cannot listen for the group: ") + strerror(errno);
    if (fd >= 0) close(fd);
    return false;
  }
  socklen_t sl = sizeof(sa);
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &sl);
  char ip[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof(ip));
  addr_ = std::string(ip) + ":" + std::to_string(ntohs(sa.sin_port));
  listen_fd_ = fd;
  return true;
}

void Group::stop() {
  {
    std::lock_guard lk(mu_);
    if (stop_ || listen_fd_ < 0) return;
    stop_ = true;
    cv_.notify_all();
    for (int fd : conns_) shutdown(fd, SHUT_RDWR);
    if (leader_fd_ >= 0) shutdown(leader_fd_, SHUT_RDWR);
  }
  if (accept_th_.joinable()) accept_th_.join();
  if (join_th_.joinable()) join_th_.join();
  std::vector<std::thread> ths;
  {
    std::lock_guard lk(mu_);
    ths.swap(conn_threads_);
  }
  for (auto& t : ths)
    if (t.joinable()) t.join();
  std::lock_guard lk(mu_);
  close(listen_fd_);
  listen_fd_ = -1;
  if (leader_fd_ >= 0) close(leader_fd_);
  leader_fd_ = -1;
  for (auto& [a, fd] : idle_) close(fd);
  idle_.clear();
}

void Group::accept_loop() {
  for (;;) {
    {
      std::lock_guard lk(mu_);
      if (stop_) return;
    }
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 200) != 1) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    no_delay(fd);
    std::lock_guard lk(mu_);
    if (stop_) {
      close(fd);
      return;
    }
    conns_.push_back(fd);
    conn_threads_.emplace_back([this, fd] { serve_conn(fd); });
  }
}

void Group::serve_conn(int fd) {
  set_timeout(fd, kHelloMs);
  Frame hello;
  std::string err;
  bool ok = recv_frame(fd, hello, 0, &err) && hello.fields.size() == 5 &&
            hello.fields[0] == "HELLO" && hello.fields[1] == rv_.secret();
  const std::string node = ok ? hello.fields[2] : "", addr = ok ? hello.fields[3] : "";
  const bool member = ok && hello.fields[4] == "member";
  bool lead;
  {
    std::lock_guard lk(mu_);
    lead = leader_;
  }
  if (!ok) {
    LOG_WARN("group: refused a connection that did not show this job's secret (%s)",
             err.empty() ? "wrong hello" : err.c_str());
  } else if (member && !lead) {
    note_shared();
    send_frame(fd, Frame{{"ERR", "not the leader"}, {}}, &err);
    ok = false;
  } else {
    note_shared();  // before it can ask anything
    ok = send_frame(fd, Frame{{"OK", node_, lead ? "leader" : "-"}, {}}, &err);
  }
  set_timeout(fd, 0);
  if (ok && member) {
    {
      std::lock_guard lk(mu_);
      members_[node] = addr;  // revived by its ADOPT (what it recovered), which comes next
    }
    LOG_INFO("group: %s (%s) joined", node.c_str(), addr.c_str());
    const bool left = serve_leader_requests(fd, node);
    std::lock_guard lk(mu_);
    if (auto it = members_.find(node); it != members_.end() && it->second == addr) {
      members_.erase(it);
      if (left || stop_) {
        size_t n = table_.drop_node(node);
        LOG_INFO("group: %s left; the %zu paths it owned are free", node.c_str(), n);
      } else {
        table_.mark_died(
            node, std::chrono::steady_clock::now() + std::chrono::milliseconds(kOwnerDeathWaitMs));
        LOG_WARN(
            "group: lost %s's forwarder without its leave: the paths it owns wait up to %d s "
            "for its next forwarder (it may have closed versions not on the store yet)",
            node.c_str(), kOwnerDeathWaitMs / 1000);
      }
    }
  } else if (ok) {
    {
      std::lock_guard lk(mu_);
      peer_conns_[node]++;
    }
    for (;;) {
      Frame head;
      uint64_t body_len = 0;
      if (!recv_head(fd, head, &body_len, &err) || head.fields.empty()) break;
      if (!h_.serve_peer(node, fd, head, body_len)) break;
    }
    bool last;
    {
      std::lock_guard lk(mu_);
      last = --peer_conns_[node] == 0;
      if (last) peer_conns_.erase(node);
    }
    if (last) h_.peer_gone(node);
  }
  std::lock_guard lk(mu_);
  std::erase(conns_, fd);
  close(fd);
}

bool Group::serve_leader_requests(int fd, const std::string& node) {
  for (;;) {
    Frame req;
    std::string err;
    if (!recv_frame(fd, req, kMaxAdoptBytes, &err) || req.fields.empty()) return false;
    Frame reply;
    const std::string& verb = req.fields[0];
    if ((verb == "CLAIM" || verb == "WHO" || verb == "TAKE") && req.fields.size() == 2) {
      std::unique_lock lk(mu_);
      await_takeover(lk, req.fields[1]);
      reply = answer(req.fields[1], node,
                     verb == "CLAIM" ? Ask::kClaim
                     : verb == "WHO" ? Ask::kWho
                                     : Ask::kTake);
    } else if (verb == "OWNERS" && req.fields.size() == 2) {
      std::lock_guard lk(mu_);
      reply = owners_answer(req.fields[1], node);
    } else if (verb == "BYE") {
      send_frame(fd, Frame{{"OK"}, {}}, &err);
      return true;
    } else if (verb == "ADOPT") {
      std::lock_guard lk(mu_);
      size_t b = 0, refused = 0;
      while (b < req.body.size()) {
        size_t e = req.body.find('\n', b);
        if (e == std::string::npos) e = req.body.size();
        if (e > b && !table_.adopt(req.body.substr(b, e - b), node)) refused++;
        b = e + 1;
      }
      if (refused)
        LOG_WARN("group: %s owned %zu paths another node owns already", node.c_str(), refused);
      // A new forwarder of a node that died: what it recovered is adopted above, the rest
      // of its paths are its own again (it answers for them from the store).
      table_.revive(node);
      cv_.notify_all();
      reply.fields = {"OK"};
    } else {
      return false;
    }
    if (!send_frame(fd, reply, &err)) return false;
  }
}

void Group::join_loop() {
  std::unique_lock lk(mu_);
  while (!stop_) {
    if (left_) {  // left for good (leave()): never joins again, not even as the leader
      cv_.wait(lk, [this] { return stop_; });
      continue;
    }
    if (joined_ && leader_) {
      // Once per leader, after its join (its own claims do not wait for it): the
      // rendezvous directories of the user's ended jobs go. Then the leader marks its
      // directory as in use every kHeartbeat, so a long job's is never taken for an
      // ended one (sweep_ended_jobs).
      if (!swept_) {
        swept_ = true;
        lk.unlock();
        const std::string& dir = rv_.dir();
        if (size_t n = sweep_ended_jobs(dir.substr(0, dir.rfind('/')), dir))
          LOG_DEBUG("group: removed %zu rendezvous directories of ended jobs", n);
        lk.lock();
        continue;
      }
      if (!cv_.wait_for(lk, kHeartbeat, [this] { return stop_ || !joined_; })) rv_.touch();
      continue;
    }
    if (joined_) {
      // A member watches its connection to the leader: a leader that died is replaced
      // (and told this node's paths) before a claim has to find out.
      int fd = leader_fd_;
      lk.unlock();
      pollfd p{fd, POLLRDHUP, 0};
      bool gone = poll(&p, 1, kWatchMs) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
      lk.lock();
      if (gone && joined_ && leader_fd_ == fd) {
        LOG_WARN("group: lost the leader; joining again");
        drop_leader_conn(fd);
      }
      continue;
    }
    lk.unlock();
    {
      std::lock_guard io(leader_io_);
      close_dropped();
    }
    bool ok = join_once();
    lk.lock();
    if (ok) {
      joined_ = true;
      cv_.notify_all();
    } else if (!stop_) {
      cv_.wait_for(lk, std::chrono::milliseconds(
                           10));  // the leader publishes its address just after its lock
    }
  }
}

void Group::note_shared() {
  if (!shared_.exchange(true)) h_.group_changed(false);
}

bool Group::join_once() {
  std::string err;
  if (rv_.try_lead(&err)) {
    std::string was_node, was_addr;
    bool retired = false;
    std::vector<std::string> dead;
    const bool was = rv_.read_leader(&was_node, &was_addr, &retired, &dead);
    const auto now = std::chrono::steady_clock::now();
    std::unique_lock lk(mu_);
    // Members tell a new leader their paths: claims of paths it does not know wait.
    if (was && (was_node != node_ || !retired))
      takeover_until_ = now + std::chrono::milliseconds(kTakeoverGraceMs);
    // The old leader died (never retired): its node's paths were in its table only. So
    // were the paths of the dead nodes a retired one names.
    std::vector<std::string> suspects = dead;
    if (was && !retired && was_node != node_) suspects.push_back(was_node);
    for (const std::string& n : suspects) {
      if (n == node_) continue;
      table_.suspect_unknown(n, now + std::chrono::milliseconds(kOwnerDeathWaitMs));
      LOG_WARN(
          "group: %s's forwarder died without leaving (the old leader's table had its "
          "paths): paths nobody owns now wait up to %d s for its next forwarder (it may have "
          "closed versions not on the store yet)",
          n.c_str(), kOwnerDeathWaitMs / 1000);
    }
    for (const std::string& p : owned_) table_.adopt(p, node_);
    leader_ = true;
    if (!rv_.publish(node_, addr_, &err)) LOG_WARN("group: %s", err.c_str());
    LOG_INFO("group: %s leads the job's forwarders at %s", node_.c_str(), addr_.c_str());
    // Another node's forwarder led or was known before, or a leader died (its members, if
    // it had any, join this one soon): this one is not alone.
    bool others = was && (was_node != node_ || !retired);
    for (const std::string& n : suspects) others = others || n != node_;
    lk.unlock();
    if (others)
      note_shared();
    else if (!shared_.load())
      h_.group_changed(true);
    return true;
  }
  if (!err.empty()) {
    static bool told = false;
    if (!told) LOG_WARN("group: %s; trying again", err.c_str());
    told = true;
  }
  std::string lnode, laddr;
  bool retired = false;
  if (!rv_.read_leader(&lnode, &laddr, &retired) || retired) return false;
  int fd = connect_raw(laddr, &err);
  if (fd < 0) return false;
  set_timeout(fd, kHelloMs);
  Frame reply;
  if (!send_frame(fd, Frame{{"HELLO", rv_.secret(), node_, addr_, "member"}, {}}, &err) ||
      !recv_frame(fd, reply, 0, &err) || reply.fields.size() != 3 || reply.fields[0] != "OK" ||
      reply.fields[2] != "leader") {
    close(fd);
    return false;
  }
  std::string adopt;
  {
    std::lock_guard lk(mu_);
    for (const std::string& p : owned_) adopt += p + "\n";
  }
  // Always, even empty: it also tells the leader this node's forwarder is back (owners.h).
  if (!send_frame(fd, Frame{{"ADOPT"}, adopt}, &err) || !recv_frame(fd, reply, 0, &err)) {
    close(fd);
    return false;
  }
  set_timeout(fd, 0);
  note_shared();
  std::lock_guard lk(mu_);
  leader_fd_ = fd;
  leader_addr_ = laddr;
  LOG_INFO("group: %s joined the job's forwarders led by %s (%s)", node_.c_str(), lnode.c_str(),
           laddr.c_str());
  return true;
}

void Group::await_takeover(std::unique_lock<std::mutex>& lk, const std::string& path) {
  while (!stop_ && !table_.known(path) && std::chrono::steady_clock::now() < takeover_until_)
    cv_.wait_until(lk, std::min(takeover_until_,
                                std::chrono::steady_clock::now() + std::chrono::milliseconds(20)));
}

std::string Group::addr_of(const std::string& node) {
  if (node == node_) return addr_;
  auto m = members_.find(node);
  return m != members_.end() ? m->second : "";
}

Frame Group::answer(const std::string& path, const std::string& node, Ask ask) {
  const auto now = std::chrono::steady_clock::now();
  auto owner_frame = [&](const std::string& owner) {
    return Frame{{"OWNER", owner, addr_of(owner)}, {}};
  };
  if (ask == Ask::kTake) {
    std::string previous;
    if (!table_.take(path, node, now, &previous)) return Frame{{"DIED"}, {}};
    return previous.empty() ? Frame{{"NONE"}, {}} : owner_frame(previous);
  }
  OwnerTable::Answer a =
      ask == Ask::kClaim ? table_.claim(path, node, now) : table_.find(path, now);
  if (a.died) return Frame{{"DIED"}, {}};
  if (!a.owner) return Frame{{"NONE"}, {}};
  return owner_frame(*a.owner);
}

Frame Group::owners_answer(const std::string& prefix, const std::string& node) {
  Frame f{{"OK"}, {}};
  for (const std::string& n : table_.nodes_under(prefix, node))
    if (const std::string addr = addr_of(n); !addr.empty()) f.body += n + "\t" + addr + "\n";
  return f;
}

void Group::drop_leader_conn(int fd) {
  // mu_ held. Shut down at once (a request blocked on it returns); closed by
  // close_dropped() under leader_io_, so no request ever writes to a reused number.
  if (fd < 0 || leader_fd_ != fd) return;
  shutdown(fd, SHUT_RDWR);
  dropped_.push_back(fd);
  leader_fd_ = -1;
  joined_ = false;
  cv_.notify_all();
}

void Group::close_dropped() {
  // leader_io_ held.
  std::vector<int> fds;
  {
    std::lock_guard lk(mu_);
    fds.swap(dropped_);
  }
  for (int fd : fds) close(fd);
}

bool Group::ask_leader(const Frame& req, Frame& reply) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    {
      std::unique_lock lk(mu_);
      cv_.wait_for(lk, std::chrono::milliseconds(kJoinWaitMs), [this] { return joined_ || stop_; });
      if (!joined_ || stop_) return false;
      if (leader_) return false;  // the caller asks its own table
    }
    std::lock_guard io(leader_io_);
    int fd;
    {
      std::lock_guard lk(mu_);
      fd = leader_fd_;
    }
    if (fd < 0) continue;  // dropped meanwhile: wait for the join
    std::string err;
    if (send_frame(fd, req, &err) && recv_frame(fd, reply, 1 << 20, &err)) return true;
    LOG_WARN("group: lost the leader (%s); joining again", err.c_str());
    {
      std::lock_guard lk(mu_);
      drop_leader_conn(fd);
    }
    close_dropped();
  }
  return false;
}

std::optional<Owner> Group::owner_reply(const Frame& reply) {
  if (reply.fields.size() == 3 && reply.fields[0] == "OWNER") {
    if (reply.fields[1] == node_) return Owner{};
    if (reply.fields[2].empty()) return std::nullopt;  // an owner that is not a member
    return Owner{false, reply.fields[1], reply.fields[2]};
  }
  return std::nullopt;
}

std::optional<Owner> Group::claim(const std::string& path) { return ask_owner(path, Ask::kClaim); }

std::optional<Owner> Group::who(const std::string& path) { return ask_owner(path, Ask::kWho); }

std::optional<Owner> Group::take(const std::string& path) { return ask_owner(path, Ask::kTake); }

void Group::disown(const std::string& path) {
  std::lock_guard lk(mu_);
  owned_.erase(path);
}

std::vector<Owner> Group::owners_under(const std::string& prefix) {
  Frame reply;
  {
    std::unique_lock lk(mu_);
    if (listen_fd_ < 0 || stop_ || left_ || !joined_) return {};
    if (leader_) reply = owners_answer(prefix, node_);
  }
  if (reply.fields.empty() && !ask_leader(Frame{{"OWNERS", prefix}, {}}, reply)) return {};
  // (A member's own paths are never among them: the leader leaves the asker out.)
  std::vector<Owner> out;
  if (reply.fields.empty() || reply.fields[0] != "OK") return out;
  for (size_t b = 0; b < reply.body.size();) {  // "node\taddr\n" lines
    size_t e = reply.body.find('\n', b), t = reply.body.find('\t', b);
    if (e == std::string::npos || t == std::string::npos || t > e) break;
    out.push_back(Owner{false, reply.body.substr(b, t - b), reply.body.substr(t + 1, e - t - 1)});
    b = e + 1;
  }
  return out;
}

std::optional<Owner> Group::ask_owner(const std::string& path, Ask ask) {
  const auto limit = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(kOwnerDeathWaitMs + kTakeoverGraceMs);
  bool told = false;
  for (int lost = 0; lost < 2;) {
    Frame reply;
    bool asked = false;
    {
      std::unique_lock lk(mu_);
      if (listen_fd_ < 0 || stop_ || left_) return std::nullopt;
      if (ask != Ask::kTake && owned_.count(path)) return Owner{};
      // A read waits for the join too: only the owner knows its closed versions that are
      // not on the store yet (the store's journal has none of them).
      cv_.wait_for(lk, std::chrono::milliseconds(kJoinWaitMs), [this] { return joined_ || stop_; });
      if (!joined_ || stop_) return std::nullopt;
      if (leader_) {
        await_takeover(lk, path);
        reply = answer(path, node_, ask);  // DIED: waited out below, as a member's
        asked = true;
      }
    }
    const char* verb = ask == Ask::kClaim ? "CLAIM" : ask == Ask::kWho ? "WHO" : "TAKE";
    if (!asked && !ask_leader(Frame{{verb, path}, {}}, reply)) {
      std::lock_guard lk(mu_);
      if (!leader_) return std::nullopt;
      ++lost;  // became the leader meanwhile: ask the own table
      continue;
    }
    if (reply.fields.size() == 1 && reply.fields[0] == "DIED") {
      if (std::chrono::steady_clock::now() >= limit) return std::nullopt;
      if (!told)
        LOG_INFO("%s: its owner's forwarder died; waiting for that node's next forwarder",
                 path.c_str());
      told = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    std::optional<Owner> o = owner_reply(reply);
    // A take is done whatever it answers: nobody else owned the path, or an owner that is
    // not a member (nothing of it to drop), or the member o that must drop its versions.
    if (ask == Ask::kTake && !o) o = Owner{};
    if (ask != Ask::kWho && o && (o->self || ask == Ask::kTake)) {
      std::lock_guard lk(mu_);
      owned_.insert(path);
    }
    return o;
  }
  return std::nullopt;
}

bool Group::owns(const std::string& path) {
  std::lock_guard lk(mu_);
  return listen_fd_ >= 0 && owned_.count(path) > 0;
}

void Group::leave() {
  bool lead;
  {
    std::unique_lock lk(mu_);
    if (listen_fd_ < 0 || stop_ || left_) return;
    // Rejoining (a leader change): a node that never says it left is "died" for a while.
    cv_.wait_for(lk, std::chrono::milliseconds(kTakeoverGraceMs),
                 [this] { return joined_ || stop_; });
    left_ = true;  // join_loop joins no more
    if (!joined_ || stop_) return;
    lead = leader_;
  }
  std::string err;
  if (lead) {
    // The next leader then knows this one took nothing with it (join_once), and which
    // dead nodes' paths it must still wait for.
    std::vector<std::string> dead;
    {
      std::lock_guard lk(mu_);
      dead = table_.dead_nodes(std::chrono::steady_clock::now());
    }
    if (!rv_.publish(node_, addr_, &err, /*retired=*/true, dead))
      LOG_WARN("group: %s", err.c_str());
    return;
  }
  std::lock_guard io(leader_io_);
  int fd;
  {
    std::lock_guard lk(mu_);
    fd = leader_fd_;
  }
  Frame reply;
  if (fd >= 0) set_timeout(fd, kHelloMs);  // a leader that hangs does not keep this exit
  if (fd < 0 || !send_frame(fd, Frame{{"BYE"}, {}}, &err) || !recv_frame(fd, reply, 0, &err))
    LOG_WARN("group: could not tell the leader this node leaves (%s): its paths wait for it",
             err.empty() ? "not joined" : err.c_str());
}

void Group::await_takeover_settled() {
  std::unique_lock lk(mu_);
  while (!stop_ && leader_ && std::chrono::steady_clock::now() < takeover_until_)
    cv_.wait_until(lk, takeover_until_);
}

std::string Group::leader_addr() {
  std::lock_guard lk(mu_);
  return joined_ && !leader_ && leader_fd_ >= 0 ? leader_addr_ : std::string();
}

int Group::connect_peer(const std::string& addr, std::string* err) {
  {
    std::lock_guard lk(mu_);
    if (auto it = idle_.find(addr); it != idle_.end()) {
      int fd = it->second;
      idle_.erase(it);
      return fd;
    }
  }
  int fd = connect_raw(addr, err);
  if (fd < 0) return -1;
  set_timeout(fd, kHelloMs);
  Frame reply;
  if (!send_frame(fd, Frame{{"HELLO", rv_.secret(), node_, addr_, "peer"}, {}}, err) ||
      !recv_frame(fd, reply, 0, err) || reply.fields.empty() || reply.fields[0] != "OK") {
    if (err && err->empty()) *err = addr + " refused this forwarder";
    close(fd);
    return -1;
  }
  set_timeout(fd, 0);
  return fd;
}

void Group::release_peer(const std::string& addr, int fd, bool reusable) {
  if (fd < 0) return;
  std::lock_guard lk(mu_);
  if (reusable && !stop_ && idle_.count(addr) < 8) {
    idle_.emplace(addr, fd);
    return;
  }
  close(fd);
}

}  // namespace ckptfwd::fwd::group
