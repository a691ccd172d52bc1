#include "forwarder/daemon/forwarder.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

#include "common/release.h"
#include "forwarder/daemon/client_session.h"
#include "forwarder/daemon/dead_sessions.h"
#include "forwarder/daemon/listener.h"
#include "forwarder/daemon/log_place.h"
#include "forwarder/daemon/recovery.h"
#include "forwarder/daemon/session_dir.h"
#include "forwarder/restore/restore.h"
#include "forwarder/util/log.h"
#include "forwarder/util/notices.h"
#include "forwarder/util/process_alive.h"
#include "forwarder/util/store_paths.h"
#include "store/manifest/manifest.h"
#include "store/manifest/owner_check.h"
#include "wire/activity.h"
#include "wire/notices.h"

namespace ckptfwd::fwd {

Forwarder::Forwarder(const Config& cfg, const SessionPaths& paths, BatcherTiming timing)
    : paths_(paths), core_(cfg, paths.dir, paths.node), svc_(core_), batcher_(core_, svc_, timing) {
  core_.job = paths.job;
  core_.stats.set_node(paths.node);
  core_.stats.set_job(paths.job);
  core_.state.pending.set_identity(paths.node, paths.job);
  core_.state.retire_grace = timing.retire_grace;
  core_.state.view_grace = timing.view_grace;
}

Forwarder::~Forwarder() {
  preload_stop_ = true;
  if (catalog_preload_.joinable()) catalog_preload_.join();
  svc_.set_group(nullptr);  // records are appended here from now on
  group_.stop();
  if (stay_for_pidfd_ >= 0) close(stay_for_pidfd_);
  batcher_.stop();
  {
    std::lock_guard lk(core_.state.mu);
    core_.state.shutdown = true;
    core_.state.done_cv.notify_all();
  }
  reap_clients(true);
  if (listen_fd_ >= 0) release_socket(true);
  for (int fd : wake_)
    if (fd >= 0) close(fd);
}

Forwarder::Start Forwarder::start(std::string* err) {
  if (!prepare_session_dir(paths_.stage_root, paths_.dir, err)) return Start::kFailed;
  switch (bind_control_socket(paths_.socket, &listen_fd_, &sock_ino_, err)) {
    case BindResult::kOtherLive:
      return Start::kOtherRunning;
    case BindResult::kFailed:
      return Start::kFailed;
    case BindResult::kBound:
      break;
  }
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    if (err) *err = std::string("pipe: ") + strerror(errno);
    return Start::kFailed;
  }
  // The application's activity word (yield_gate.h), before a library can connect.
  std::string gate_err;
  if (!core_.gate.attach(paths_.dir, &gate_err))
    LOG_WARN("%s: compression does not give way to the application's writes", gate_err.c_str());
  notices().attach(paths_.dir, core_.gate.page());
  for (const std::string& w : core_.cfg.setting_warnings) {
    LOG_WARN("%s", w.c_str());
    notices().post("setting " + w, w + log_pointer());
  }
  // Before the recovery changes anything: an earlier forwarder's read links are not found.
  core_.links.attach(core_.gate.page(), paths_.job);
  core_.fates.remove_dead_claim_files();  // (bound: no other forwarder of this session runs)
  recover_staged(core_);
  sweep_dead_sessions(paths_.stage_root, paths_.dir);  // other jobs' killed forwarders
  batcher_.start();
  start_group();
  LOG_INFO("ckptfwd-forwarder %s serving %s (store %s, codec %s, %d writers)", release_version(),
           paths_.socket, core_.cfg.store.empty() ? "<dir>/.ckptfwd" : core_.cfg.store.c_str(),
           core_.cfg.codec.c_str(), core_.cfg.writers);
  return Start::kReady;
}

void Forwarder::start_group() {
  const Config& cfg = core_.cfg;
  if (!cfg.group || (cfg.store.empty() && cfg.capture_dirs.empty())) return;
  // One place every node of the job finds: the store of the first capture directory.
  const std::string store =
      cfg.store.empty() ? store_for(cfg, cfg.capture_dirs.front() + "/.group") : cfg.store;
  std::string err;
  group::Group::Settings gs{store + "/.group-" + paths_.job, paths_.node, cfg.group_addr, {}};
  {
    // What a dead forwarder of this node left and this one recovered: still this node's.
    std::lock_guard lk(core_.state.mu);
    for (const auto& [vid, v] : core_.state.versions)
      if (!v.dropped && v.owner_addr.empty()) gs.owned.insert(v.path);
  }
  // Only in a store of this user's (not through another user's planted symbolic link):
  // the rendezvous directory holds the job's secret.
  if (!manifest::ensure_store(store, &err) || !check_store_dir(store, &err) ||
      !group_.start(gs, &err)) {
    LOG_WARN(
        "no forwarder group for job %s (%s): a file written from several nodes is "
        "coordinated through the store alone. Fix: CKPTFWD_GROUP_ADDR, or CKPTFWD_GROUP=0",
        paths_.job, err.c_str());
    return;
  }
  svc_.set_group(&group_);
  core_.state.pending.set_grouped(true);
}

void Forwarder::request_stop() {
  stop_req_ = true;
  ssize_t w = write(wake_[1], "s", 1);
  (void)w;
}

void Forwarder::request_stats() {
  stats_req_ = true;
  ssize_t w = write(wake_[1], "u", 1);
  (void)w;
}

void Forwarder::accept_client() {
  int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  long pid = 0;
  if (!peer_is_us(fd, &pid)) {
    LOG_WARN("refused a connection from pid %ld: it runs as another user", pid);
    close(fd);
    return;
  }
  {
    std::lock_guard lk(core_.state.mu);
    core_.state.clients++;
  }
  uint64_t id = next_client_++;
  std::lock_guard lk(clients_mu_);
  Client& c = clients_[id];
  c.fd = fd;
  c.th = std::thread([this, fd, id, pid] {
    serve_client(svc_, fd, id, pid, core_.cfg.spin_us);
    std::lock_guard lk2(clients_mu_);
    auto it = clients_.find(id);  // gone when the shutdown already collected this thread
    if (it != clients_.end()) {
      it->second.fd = -1;
      it->second.done = true;
    }
    close(fd);
  });
}

void Forwarder::reap_clients(bool all) {
  std::vector<std::thread> finished;
  {
    std::lock_guard lk(clients_mu_);
    for (auto it = clients_.begin(); it != clients_.end();) {
      if (all && !it->second.done && it->second.fd >= 0) shutdown(it->second.fd, SHUT_RDWR);
      if (all || it->second.done) {
        finished.push_back(std::move(it->second.th));
        it = clients_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& t : finished)
    if (t.joinable()) t.join();
}

void Forwarder::stay_while_alive(pid_t pid) {
  stay_for_ = pid;
  stay_for_pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (stay_for_pidfd_ < 0 && errno == ESRCH) stay_for_ = 0;  // gone already
}

bool Forwarder::stay_for_alive() {
  if (stay_for_ <= 0) return false;
  bool alive;
  if (stay_for_pidfd_ >= 0) {
    pollfd p{stay_for_pidfd_, POLLIN, 0};
    alive = poll(&p, 1, 0) == 0;  // readable once the process has exited
  } else {
    alive = process_alive(stay_for_);  // a zombie counts as gone
  }
  if (!alive) {
    if (stay_for_pidfd_ >= 0) close(stay_for_pidfd_);
    stay_for_pidfd_ = -1;
    stay_for_ = 0;
  }
  return alive;
}

bool Forwarder::idle_expired(int64_t& idle_since_ns) {
  if (core_.cfg.idle_exit_s <= 0) return false;
  int64_t now = monotonic_ns();
  if (stay_for_alive()) {
    idle_since_ns = now;
    return false;
  }
  {
    std::lock_guard lk(core_.state.mu);
    if (core_.state.clients > 0 || core_.state.busy()) {
      idle_since_ns = now;
      return false;
    }
  }
  return now - idle_since_ns >= static_cast<int64_t>(core_.cfg.idle_exit_s) * 1000000000;
}

bool Forwarder::release_socket(bool block) {
  int lock = open(paths_.lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  bool locked = lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0;
  // Stopping for good: wait a little for the lock, but a stuck holder cannot keep us.
  for (int i = 0; block && lock >= 0 && !locked && i < 40; ++i) {
    usleep(50000);
    locked = flock(lock, LOCK_EX | LOCK_NB) == 0;
  }
  if (lock >= 0 && !locked && !block) {
    close(lock);
    return false;  // a library is starting a forwarder: it wants one, stay
  }
  if (!block) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 0) > 0) {  // a client is knocking: serve it instead of leaving
      if (lock >= 0) close(lock);
      return false;
    }
  }
  struct stat st;
  if (lstat(paths_.socket, &st) == 0 && st.st_ino == sock_ino_) unlink(paths_.socket);
  close(listen_fd_);
  listen_fd_ = -1;
  if (lock >= 0) close(lock);  // releases the flock
  return true;
}

namespace {
// True if dir holds nothing but `lock`, the activity word's file (wire/activity.h) and the
// notices (wire/notices.h); staged versions, a socket or anything else: false.
bool only_lock_left(const char* dir) {
  DIR* d = opendir(dir);
  if (!d) return false;
  bool only = true;
  while (dirent* de = readdir(d)) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || !strcmp(de->d_name, "lock") ||
        !strcmp(de->d_name, activity::kFileName) || !strcmp(de->d_name, wire::kNoticesFile))
      continue;
    only = false;
    break;
  }
  closedir(d);
  return only;
}
}  // namespace

void Forwarder::remove_session_dir() {
  const std::string activity_file = std::string(paths_.dir) + "/" + activity::kFileName;
  const std::string notices_file = std::string(paths_.dir) + "/" + wire::kNoticesFile;
  int lock = open(paths_.lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (lock < 0) {
    if (only_lock_left(paths_.dir)) {
      unlink(activity_file.c_str());
      unlink(notices_file.c_str());
      rmdir(paths_.dir);
    }
    return;
  }
  bool locked = flock(lock, LOCK_EX | LOCK_NB) == 0;
  for (int i = 0; !locked && i < 40; ++i) {  // a library is starting a forwarder: let it
    usleep(50000);
    locked = flock(lock, LOCK_EX | LOCK_NB) == 0;
  }
  if (locked && only_lock_left(paths_.dir)) {
    unlink(activity_file.c_str());
    unlink(notices_file.c_str());
    unlink(paths_.lock);
    if (rmdir(paths_.dir) == 0) LOG_DEBUG("removed the session directory %s", paths_.dir);
  } else if (locked) {
    LOG_INFO("session directory %s kept: it still holds staged files or a new forwarder",
             paths_.dir);
  }
  close(lock);
}

int Forwarder::drain_within_bound() {
  const int bound_s = core_.cfg.term_drain_s;
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread guard([&] {
    std::unique_lock l(m);
    if (cv.wait_for(l, std::chrono::seconds(bound_s), [&] { return done; })) return;
    l.unlock();
    std::lock_guard lk(core_.state.mu);
    LOG_WARN("still draining after %d s (CKPTFWD_TERM_DRAIN_S): stopping", bound_s);
    core_.state.shutdown = true;  // the waits give up
    core_.state.done_cv.notify_all();
  });
  int rc = svc_.drain_all();
  {
    std::lock_guard l(m);
    done = true;
  }
  cv.notify_all();
  guard.join();
  return rc;
}

void Forwarder::stop_batcher_within_bound() {
  constexpr int kStopGrace = 10;  // seconds: more than a failing attempt and its retry delay
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread guard([&] {
    std::unique_lock l(m);
    if (cv.wait_for(l, std::chrono::seconds(kStopGrace), [&] { return done; })) return;
    LOG_ERROR(
        "a commit to the store still runs %d s after the drain stopped (the store hangs?): "
        "exiting without it; the staged versions stay in %s for the next forwarder",
        kStopGrace, paths_.dir);
    _exit(1);
  });
  batcher_.stop();
  {
    std::lock_guard l(m);
    done = true;
  }
  cv.notify_all();
  guard.join();
}

bool Forwarder::log_left_staged() {
  std::lock_guard lk(core_.state.mu);
  std::string paths;
  size_t n = 0;
  for (const auto& [vid, v] : core_.state.versions) {
    if (v.dropped || v.snapshot_of) continue;  // a snapshot is a name of an open version
    if (n++ < 8) paths += (paths.empty() ? "" : ", ") + v.path;
  }
  if (n == 0) return false;
  LOG_ERROR(
      "%zu file versions are not committed: %s%s. Their staged files stay in %s; the next "
      "forwarder of this job and node recovers them (ckptfwd drain with the job's "
      "environment starts one)",
      n, paths.c_str(), n > 8 ? ", ..." : "", paths_.dir);
  return true;
}

// The catalog of a store with a long history takes a while to load (its MANIFEST, or its
// snapshot and the records after it); loaded by the first OPEN, it made that open wait
// (120 ms for a store of 30,000 files on the test machine, the first of 2,000 small files
// from a script). Loaded here, on a thread of its own, without the state lock, from the
// moment the forwarder serves: a forwarder started early (MPI ranks, a job script) has it
// before the first checkpoint. An OPEN that comes first loads it itself, as before (one
// that comes while it is loaded here loads it too, and this load is dropped).
void Forwarder::preload_catalogs() {
  try {
    for (const std::string& store : known_stores(core_.cfg)) {
      if (preload_stop_) return;
      {
        std::lock_guard lk(core_.state.mu);
        if (core_.state.catalogs.known(store)) continue;
      }
      CatalogCache::Preloaded p =
          CatalogCache::preload(store, core_.cfg.keep, core_.cfg.store.empty());
      std::lock_guard lk(core_.state.mu);
      if (core_.state.catalogs.install(store, std::move(p)))
        LOG_DEBUG("catalog of store %s loaded ahead of the first open", store.c_str());
    }
  } catch (const std::exception& e) {  // (no memory): the first open loads it, as before
    LOG_WARN("loading the stores' catalogs ahead of the first open: %s", e.what());
  }
}

bool Forwarder::job_stats_ready() const {
  if (job_stats_.empty() || job_stats_ == core_.cfg.stats_file) return false;
  // The store's logs/ directory, made when the capture directory exists (log_place.h).
  return make_store_logs_dir(job_stats_);
}

void Forwarder::append_record(const std::string& line) {
  append_stats_line(core_.cfg.stats_file, line);
  if (job_stats_ready()) append_stats_line(job_stats_, line);
}

void Forwarder::write_checkpoint_records() {
  std::vector<CheckpointCosts::Record> recs;
  {
    std::lock_guard lk(core_.state.mu);
    recs = core_.state.costs.take_records();
  }
  if (recs.empty()) return;
  timespec wall{};
  clock_gettime(CLOCK_REALTIME, &wall);
  const int64_t now_wall = static_cast<int64_t>(wall.tv_sec) * 1000000000 + wall.tv_nsec;
  const auto now = CheckpointCosts::Clock::now();
  for (const CheckpointCosts::Record& r : recs) {
    std::string line = CheckpointCosts::checkpoint_json(r, core_.stats.node, core_.stats.job,
                                                        static_cast<long>(getpid()), now_wall, now);
    // Per checkpoint only where someone asked for a file: stderr is not a place for them.
    if (!core_.cfg.stats_file.empty()) append_stats_line(core_.cfg.stats_file, line);
    if (job_stats_ready()) append_stats_line(job_stats_, line);
  }
}

int Forwarder::run() {
  try {
    catalog_preload_ = std::thread([this] { preload_catalogs(); });
  } catch (const std::system_error& e) {  // no thread to spare: the first open loads them
    LOG_WARN("cannot start a thread to load the stores' catalogs ahead: %s", e.what());
  }
  int64_t idle_since = monotonic_ns();
  const char* why = "stop requested";
  while (listen_fd_ >= 0) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    int n = poll(p, 2, 250);
    if (n > 0 && (p[1].revents & POLLIN)) {
      char buf[64];
      while (read(wake_[0], buf, sizeof(buf)) > 0) {
      }
      if (stats_req_.exchange(false))
        append_stats_line(core_.cfg.stats_file, core_.stats.to_json());  // (SIGUSR1: asked for)
      if (stop_req_) break;
    }
    if (n > 0 && (p[0].revents & POLLIN)) accept_client();
    reap_clients(false);
    write_checkpoint_records();
    if (idle_expired(idle_since) && release_socket(false)) {
      why = "idle";
      break;
    }
  }
  if (listen_fd_ >= 0) release_socket(true);
  preload_stop_ = true;  // (a load under way ends first; it is joined after the drain)
  LOG_INFO("shutting down (%s): draining", why);
  drain_within_bound();
  stop_batcher_within_bound();
  // Everything on the store: the group frees this node's paths at once. Versions left
  // staged keep them this node's until its next forwarder recovers them (group.h).
  if (!log_left_staged()) group_.leave();
  {
    std::lock_guard lk(core_.state.mu);
    core_.state.shutdown = true;
    core_.state.done_cv.notify_all();
  }
  reap_clients(true);
  core_.prefetch.stop();  // no view may appear after they are removed
  remove_read_views(paths_.dir);
  core_.fates.remove_claim_file();  // no client left to claim a fate
  core_.state.journal.remove_if_unused();
  write_checkpoint_records();
  append_record(core_.stats.to_json());
  for (const std::string& v : core_.var_stats.json_lines(kStatsVarsMax)) append_record(v);
  remove_session_dir();
  if (catalog_preload_.joinable()) catalog_preload_.join();
  LOG_INFO("exit");
  return 0;
}

}  // namespace ckptfwd::fwd
