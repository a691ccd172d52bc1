// One forwarder instance: session dir, control socket, recovery, the batcher, one thread
// per client, idle exit and the clean shutdown. main.cc wraps it in a process; tests run
// it on a thread.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "forwarder/batching/batcher.h"
#include "forwarder/core.h"
#include "forwarder/group/group.h"
#include "forwarder/verbs/service.h"
#include "wire/session.h"

namespace ckptfwd::fwd {

class Forwarder {
 public:
  enum class Start { kReady, kOtherRunning, kFailed };

  Forwarder(const Config& cfg, const SessionPaths& paths, BatcherTiming timing = {});
  ~Forwarder();
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  // Prepares the session dir, binds the socket (kOtherRunning if a live forwarder answers
  // there), recovers leftover staged versions and starts the batcher.
  Start start(std::string* err);
  // Serves until request_stop() or the idle timeout, then drains, removes the socket and
  // read views and appends the stats. Returns the exit status (0: versions that could not
  // be committed stay staged for the next forwarder, and the log says so).
  int run();
  // Both async-signal-safe.
  void request_stop();
  void request_stats();

  Core& core() { return core_; }
  Service& service() { return svc_; }  // (tests)
  const SessionPaths& paths() const { return paths_; }
  // Started ahead by process pid (a rank's library at its start, before it connects): not
  // idle while that process lives, so the forwarder is still there at its first
  // checkpoint however late that comes. Without a pidfd (kernels before 5.3) pid is
  // probed by kill(pid, 0).
  void stay_while_alive(pid_t pid);
  // The job's stats file beside its log (<store>/logs/<job>.<node>.stats.jsonl, log_place.h):
  // a record per checkpoint as it completes, and the forwarder's and its variables' records
  // at exit, as CKPTFWD_STATS_FILE gets them; what `ckptfwd report` reads. "": none.
  void set_job_stats_file(std::string path) { job_stats_ = std::move(path); }

 private:
  // Appends the records of the checkpoints completed (or changed) since the last call
  // (state/ckpt_cost.h) to the job's stats file and CKPTFWD_STATS_FILE.
  void write_checkpoint_records();
  // line to CKPTFWD_STATS_FILE (stderr when unset, as before) and the job's stats file.
  void append_record(const std::string& line);
  // The job's stats file is set, not CKPTFWD_STATS_FILE itself, and its directory is
  // there (made when the capture directory exists).
  bool job_stats_ready() const;
  std::string job_stats_;
  void accept_client();
  void reap_clients(bool all);
  bool idle_expired(int64_t& idle_since_ns);
  // Removes the socket under flock(lock) so a library spawning a forwarder right now never
  // sees a half-gone one. Non-blocking form gives up (false) if the lock is busy or a
  // client is knocking.
  bool release_socket(bool block);
  // At exit, drained, socket gone: removes the session dir if nothing is left in it but
  // the election lock. The lock is unlinked while held, so a library waiting on it
  // notices (its locked file is no longer the one at the path) and starts over.
  void remove_session_dir();
  // drain_all for at most cfg.term_drain_s seconds: then the waits give up (EIO) and what
  // is not committed stays staged, so a stop request always ends the forwarder (a store
  // that refuses every commit would make each batch retry, one batch after the other).
  int drain_within_bound();
  // Stops the batcher; a batch in flight finishes its attempt first. A store that hangs
  // could hold that forever: after kStopGrace the process leaves without it (_exit), the
  // staged versions keeping their descriptions for the next forwarder.
  void stop_batcher_within_bound();
  // Joins (or leads) the job's forwarder group (forwarder/group/group.h) unless
  // CKPTFWD_GROUP=0; a group that cannot start is logged and the forwarder goes on alone.
  void start_group();
  // Logs every version not committed (staged, left for the next forwarder of this
  // session); true when there is one.
  bool log_left_staged();

  // stay_while_alive: the process and its pidfd (-1: none, or it has exited).
  pid_t stay_for_ = 0;
  int stay_for_pidfd_ = -1;
  bool stay_for_alive();

  SessionPaths paths_;
  Core core_;
  Service svc_;
  Batcher batcher_;
  group::Group group_{svc_};  // stopped first: its threads call svc_
  int listen_fd_ = -1;
  ino_t sock_ino_ = 0;
  int wake_[2] = {-1, -1};
  std::atomic<bool> stop_req_{false}, stats_req_{false};
  uint64_t next_client_ = 1;

  struct Client {
    std::thread th;
    int fd = -1;
    bool done = false;
  };
  std::mutex clients_mu_;
  std::map<uint64_t, Client> clients_;
  // Loads the known stores' catalogs while the forwarder already serves (preload_catalogs);
  // stops before the next store once the forwarder stops serving.
  std::thread catalog_preload_;
  std::atomic<bool> preload_stop_{false};
  void preload_catalogs();
};

}  // namespace ckptfwd::fwd
