// Where the forwarders of one job find each other: a directory on the store every node
// sees, STORE/.group-<job>/ (mode 0700, so only the job's user can read it), holding
//   secret       32 hex digits, made once per job by the first forwarder (link(2) of a
//                complete temporary file, so nobody reads half of it); a peer that does
//                not show it is refused (group.h);
//   leader.lock  the leader holds an OFD write lock on it for as long as it lives: one
//                leader per job at a time, and a new one as soon as it dies; its time is
//                the last time a leader said the job runs (sweep_ended_jobs);
//   leader       "<node>\t<host:port>\n" of the current leader (rename(2) of a complete file);
//                "<node>\t<host:port>\tretired[\t<node>]*\n" once it left with everything on
//                the store (a leader that takes over knows then that the old one took
//                nothing with it), naming the nodes whose forwarders had died and not come
//                back (their paths were in its table only: owners.h).
// The file system only has to give: mkdir, link and rename atomic, and fcntl locks that
// every client sees (a leader's death frees its lock). A stale read of `leader` (another
// client's rename seen late) only makes a member try again: the address it names refuses
// it or does not answer as the leader.
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace ckptfwd::fwd::group {

// Removes the rendezvous directories of ended jobs from parent (the store): those of this
// user, other than keep, whose leader lock nobody holds, and whose leader left cleanly
// (`retired`, no dead node named) at least retired_age ago, or which nobody touched for
// stale_age (a job whose forwarders were all killed). A job that still runs has a leader
// holding the lock (a new one within moments of a death) that touches the lock file
// often (Rendezvous::touch): its directory is never that old. Returns how many it removed.
size_t sweep_ended_jobs(const std::string& parent, const std::string& keep,
                        std::chrono::seconds retired_age = std::chrono::hours(1),
                        std::chrono::seconds stale_age = std::chrono::hours(7 * 24));

class Rendezvous {
 public:
  Rendezvous() = default;
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;
  ~Rendezvous();

  // Creates dir (0700) and its secret when missing, and reads the secret. Refuses (false
  // with *err) a directory another user owns or others may read. A directory or secret
  // this client does not see yet (made by another node, on a distributed file system) is
  // looked for again for up to 4 s.
  bool open(const std::string& dir, std::string* err);
  const std::string& secret() const { return secret_; }
  const std::string& dir() const { return dir_; }

  // Takes the leader lock without waiting: true when this process now leads (then for
  // as long as it lives). False when another process holds it, or with *err set when
  // the file system refused the lock.
  bool try_lead(std::string* err);
  bool leading() const { return lock_fd_ >= 0; }
  // The leader marks the directory as in use: the lock file's time is now.
  void touch();
  // Publishes the leader's node and address (retired: it leaves, nothing of it unstored;
  // dead: the nodes that died and did not come back, when retired).
  bool publish(const std::string& node, const std::string& addr, std::string* err,
               bool retired = false, const std::vector<std::string>& dead = {});
  // The published leader, false when there is none (yet) or the file is malformed.
  bool read_leader(std::string* node, std::string* addr, bool* retired = nullptr,
                   std::vector<std::string>* dead = nullptr) const {
    return read_leader_of(dir_, node, addr, retired, dead);
  }
  // The same of any rendezvous directory.
  static bool read_leader_of(const std::string& dir, std::string* node, std::string* addr,
                             bool* retired, std::vector<std::string>* dead);

 private:
  std::string dir_, secret_;
  int lock_fd_ = -1;
};

}  // namespace ckptfwd::fwd::group
