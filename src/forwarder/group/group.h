// A job's forwarders, one per node, as a group that talks over TCP: the files a rank of
// one node writes and a rank of another node opens are handed between the two forwarders
// directly, not through the store.
//
// Membership. Each forwarder listens on a TCP port (Config::group_addr, else the address
// its host name resolves to) and finds the others through the job's rendezvous directory
// on the store (rendezvous.h). The one holding the leader lock is the leader; every other
// member keeps one connection to it. A peer must show the job's secret first.
//
// Ownership. A write open of a path asks the leader who owns it (claim): the first node
// that claimed it in this job, for the whole job while that node's forwarder lives. The
// owner's forwarder is the only one that stages and commits the path's versions, so the
// store never gets two nodes' versions of one file whose order would decide its bytes.
// Another node's writers stage a copy of the owner's bytes, write it, and at their close
// hand the bytes they wrote to the owner (the verbs in forwarder/verbs/remote_verbs.cc).
// A node asks the leader only for a path it does not own already; a file written by one
// node only costs one round trip to the leader at its first open in the job.
//
// Failure. A member that loses the leader joins again (maybe as the new leader) and tells
// it the paths it owns. A node whose forwarder left cleanly (leave(): everything it staged
// is on the store) frees its paths; one whose forwarder died keeps them, answered "died"
// (owners.h), until its next forwarder joins with what it recovered: a claim or a read
// of such a path waits for that (up to kOwnerDeathWaitMs). So the owner of a path is the
// only node that needs to know it closed a version not on the store yet: no other node
// reads the path from the store meanwhile. A request to an owner that cannot be reached
// asks the leader again; the caller falls back to what it did before the group (staging
// the file on its own node, and the close-to-open journal on the store) only when the
// group cannot answer at all.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "forwarder/group/frame.h"
#include "forwarder/group/owners.h"
#include "forwarder/group/rendezvous.h"

namespace ckptfwd::fwd::group {

// What a member serves to the other members (forwarder/verbs implements it).
class PeerHandler {
 public:
  virtual ~PeerHandler() = default;
  // One request of node `node`: head read, body_len bytes of its body still on sock.
  // Reads the body and sends one reply frame; false drops the connection.
  virtual bool serve_peer(const std::string& node, int sock, const Frame& head,
                          uint64_t body_len) = 0;
  // The last connection of node closed (its forwarder exited or died).
  virtual void peer_gone(const std::string& node) = 0;
  // alone: this forwarder leads a group no other forwarder of the job ever reached; false
  // once one did (called before it can ask anything), never true again after that.
  virtual void group_changed(bool alone) { (void)alone; }
};

struct Owner {
  bool self = true;
  std::string node, addr;  // the owner's (when !self)
};

class Group {
 public:
  struct Settings {
    std::string dir;          // the rendezvous directory
    std::string node;         // this forwarder's node identity
    std::string listen_host;  // an IPv4 address or host name; "" for the host name's
    // Paths this forwarder owns from the start: those of the versions it recovered from
    // a dead forwarder of its node (claimed for it when it joins).
    std::set<std::string> owned;
  };
  explicit Group(PeerHandler& h) : h_(h) {}
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  ~Group() { stop(); }

  // Opens the rendezvous directory and listens; joins (or leads) in the background.
  bool start(const Settings& s, std::string* err);
  void stop();
  // Leaves the group for good before stop(), telling it that everything this node staged
  // is on the store (its paths are free at once, not "died").
  void leave();
  bool started() const { return listen_fd_ >= 0; }
  // Whether this node owns path in the group (claimed it, or recovered a version of it).
  bool owns(const std::string& path);
  const std::string& addr() const { return addr_; }
  const std::string& node() const { return node_; }

  // The owner of path for a write open (this node when nobody owned it). nullopt when
  // the group cannot answer (not joined within the join limit, or the leader is lost).
  // Waits while the path's owner died and may come back (owners.h).
  std::optional<Owner> claim(const std::string& path);
  // The owner of path for a read: nullopt when nobody owns it or the group cannot answer.
  std::optional<Owner> who(const std::string& path);
  // path becomes this node's whoever owned it (a rename onto it here: OwnerTable::take).
  // The node that owned it before (it must drop its versions of path: the rename replaces
  // them), or self when none did; nullopt when the group cannot answer.
  std::optional<Owner> take(const std::string& path);
  // path is no longer this node's (another node took it): this node asks the leader again.
  void disown(const std::string& path);
  // The other live members that own a path starting with prefix (OwnerTable::nodes_under);
  // empty when there are none or the group cannot answer.
  std::vector<Owner> owners_under(const std::string& prefix);

  // A leader that took over from a dead one appends nothing to the store before its
  // takeover grace ended: by then a caching client (GlusterFS: up to 2 s) shows it what the old
  // leader appended last, which it must chain to (kTakeoverGraceMs). Returns at once
  // otherwise.
  void await_takeover_settled();

  // The leader's address while this member is joined and does not lead; "" otherwise.
  std::string leader_addr();

  // A connection to a member for requests (the HELLO done); -1 with *err. Give it back
  // with release(); a connection that saw an error is closed instead (reusable = false).
  int connect_peer(const std::string& addr, std::string* err);
  void release_peer(const std::string& addr, int fd, bool reusable);

  // How long claim() waits for the first join, and a request for its reply.
  static constexpr int kJoinWaitMs = 10000;
  // A new leader that took over from another one (its leader file named another node)
  // gives the members until then to tell it the paths they own: a claim of a path not in
  // its table waits for that (their owner may be about to adopt it). It is also how long
  // a caching client of the store (GlusterFS: up to 2 s, store/manifest/end_mark.h) may
  // show what the old leader appended last late: a member that appends after losing the
  // leader waits as long.
  static constexpr int kTakeoverGraceMs = 2000;
  // How long the paths of a node whose forwarder died wait for its next forwarder: as
  // long as an open waits for another node's commit through the store's journal.
  static constexpr int kOwnerDeathWaitMs = 60000;

 private:
  bool listen_on(const std::string& host, std::string* err);
  void accept_loop();
  void serve_conn(int fd);
  bool serve_leader_requests(int fd, const std::string& node);
  void join_loop();
  bool join_once();
  // A request to the leader; the reply frame. False: the leader is lost.
  bool ask_leader(const Frame& req, Frame& reply);
  std::optional<Owner> owner_reply(const Frame& reply);
  // What a node asks the leader about a path: the verbs CLAIM, WHO and TAKE.
  enum class Ask { kClaim, kWho, kTake };
  // The leader's answer to node's ask about path (OWNER, NONE or DIED; for a take, OWNER
  // names the previous owner); mu_ held.
  Frame answer(const std::string& path, const std::string& node, Ask ask);
  // Where node's forwarder listens ("" for a node that is not a member); mu_ held.
  std::string addr_of(const std::string& node);
  // The leader's answer to OWNERS: "OK" and node, address pairs; mu_ held.
  Frame owners_answer(const std::string& prefix, const std::string& node);
  // claim(), who() and take(): asks (the leader, or the own table when leading) until the
  // answer is not DIED (bounded by kOwnerDeathWaitMs).
  std::optional<Owner> ask_owner(const std::string& path, Ask ask);
  void note_shared();  // another forwarder reached this one, or it joined one
  std::atomic<bool> shared_{false};
  void drop_leader_conn(int fd);  // mu_ held
  void close_dropped();           // leader_io_ held
  std::vector<int> dropped_;      // leader connections shut down, to close

  // Members notice a lost leader within kWatchMs.
  static constexpr int kWatchMs = 100;
  std::chrono::steady_clock::time_point takeover_until_{};
  // local_claim's wait for the members' adopt after a takeover (mu_ held through lk).
  void await_takeover(std::unique_lock<std::mutex>& lk, const std::string& path);
  bool left_ = false;   // leave() told the group
  bool swept_ = false;  // this leader removed ended jobs' rendezvous directories
  // How often the leader marks the rendezvous directory as in use (Rendezvous::touch).
  static constexpr std::chrono::minutes kHeartbeat{10};

  PeerHandler& h_;
  Rendezvous rv_;
  std::string node_, addr_;
  int listen_fd_ = -1;
  std::thread accept_th_, join_th_;
  bool stop_ = false;

  std::mutex mu_;
  std::condition_variable cv_;
  bool joined_ = false;
  bool leader_ = false;
  int leader_fd_ = -1;                          // a member's connection to the leader
  std::string leader_addr_;                     // its address
  std::mutex leader_io_;                        // one request at a time on leader_fd_
  std::set<std::string> owned_;                 // paths this node owns (told to a new leader)
  OwnerTable table_;                            // the leader's
  std::map<std::string, std::string> members_;  // the leader's: node -> addr
  std::map<std::string, int> peer_conns_;       // node -> connections served
  std::multimap<std::string, int> idle_;        // addr -> idle connections to it
  std::vector<int> conns_;                      // connections served (shut down at stop)
  std::vector<std::thread> conn_threads_;
};

}  // namespace ckptfwd::fwd::group
