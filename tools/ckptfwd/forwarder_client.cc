#include "forwarder_client.h"

#include <dirent.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli.h"
#include "staged_versions.h"
#include "wire/protocol.h"
#include "wire/session.h"

namespace ckptfwd::cli {

namespace {
long sys_read(int fd, void* p, size_t n) { return ::read(fd, p, n); }
long sys_write(int fd, const void* p, size_t n) { return ::write(fd, p, n); }

// What "no forwarder" may mean outside a batch system, where the job is named after the
// capture globs (wire/session.h, job_identity): the local sessions of this user and node.
// The other local jobs (wire/session.h) of this user and node: their job names.
std::vector<std::string> other_local_jobs(const SessionPaths& sp) {
  std::vector<std::string> out;
  if (strncmp(sp.job, "local-", 6) != 0 && strcmp(sp.job, "0") != 0) return out;
  const std::string own = "ckptfwd-" + std::to_string(getuid()) + "-";
  const std::string suffix = std::string("-") + sp.node;
  if (DIR* d = opendir(sp.stage_root)) {
    while (dirent* de = readdir(d)) {
      const std::string n = de->d_name;
      if (n.rfind(own + "local-", 0) != 0 || n.size() <= own.size() + suffix.size() ||
          n.compare(n.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      const std::string job = n.substr(own.size(), n.size() - own.size() - suffix.size());
      if (job != sp.job) out.push_back(job);
    }
    closedir(d);
  }
  return out;
}

// "job J holds N closed files not committed (session DIR)", for each other local job whose
// session holds some; "" when none does.
std::string local_jobs_with_staged(const SessionPaths& sp) {
  std::string out;
  for (const std::string& job : other_local_jobs(sp)) {
    const std::string dir = std::string(sp.stage_root) + "/ckptfwd-" + std::to_string(getuid()) +
                            "-" + job + "-" + sp.node;
    size_t n = closed_staged_versions(dir).size();
    if (n)
      out += (out.empty() ? "" : "; ") + std::string("job ") + job + " holds " + std::to_string(n) +
             " closed file version" + (n == 1 ? "" : "s") + " not committed (" + dir + ")";
  }
  return out;
}

std::string local_job_hint(const SessionPaths& sp) {
  if (strncmp(sp.job, "local-", 6) != 0 && strcmp(sp.job, "0") != 0) return "";
  std::string found;
  for (const std::string& job : other_local_jobs(sp)) found += (found.empty() ? "" : ", ") + job;
  return std::string(
             ". Outside a batch system a job is named after its CKPTFWD_CAPTURE: set it "
             "as the job did, or CKPTFWD_JOB_ID") +
         (found.empty() ? "" : " (other jobs with a session on this node: " + found + ")");
}
}  // namespace

ForwarderClient::~ForwarderClient() {
  if (fd_ >= 0) ::close(fd_);
}

ForwarderClient::Connect ForwarderClient::connect(std::string* msg) {
  SessionPaths sp;
  if (!session_paths(sp)) {
    *msg = "session path too long (shorten CKPTFWD_STAGE_DIR, CKPTFWD_JOB_ID or CKPTFWD_NODE_ID)";
    return Connect::kError;
  }
  std::string who =
      std::string("job ") + sp.job + " on node " + sp.node + " (socket " + sp.socket + ")";
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    *msg = std::string("socket: ") + strerror(errno);
    return Connect::kError;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (strlen(sp.socket) >= sizeof(addr.sun_path)) {
    *msg = std::string("socket path too long: ") + sp.socket;
    return Connect::kError;
  }
  memcpy(addr.sun_path, sp.socket, strlen(sp.socket) + 1);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int e = errno;
    ::close(fd_);
    fd_ = -1;
    if (e == ENOENT || e == ECONNREFUSED || e == ENOTDIR) {
      *msg = "no forwarder running for " + who + local_job_hint(sp);
      return Connect::kNoForwarder;
    }
    *msg = "cannot connect to the forwarder of " + who + ": " + strerror(e);
    return Connect::kError;
  }
  // Only talk to a forwarder of our own user.
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd_, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != getuid()) {
    *msg = "the socket of " + who + " belongs to another user: refusing to use it";
    ::close(fd_);
    fd_ = -1;
    return Connect::kError;
  }
  std::vector<std::string> reply;
  std::string err;
  if (!request({wire::kHello, std::to_string(getpid()), "-1"}, &reply, &err)) {
    *msg = "forwarder of " + who + " did not answer: " + err;
    return Connect::kError;
  }
  return Connect::kOk;
}

bool ForwarderClient::request(const std::vector<std::string>& fields,
                              std::vector<std::string>* reply, std::string* err) {
  std::vector<const char*> ptrs;
  for (const std::string& f : fields) ptrs.push_back(f.c_str());
  std::vector<char> buf(wire::kMaxFrame + 1);
  size_t n = wire::encode(buf.data(), buf.size(), ptrs.data(), ptrs.size());
  if (n == 0 || !wire::send_frame(fd_, buf.data(), n, sys_write)) {
    *err = std::string("send failed: ") + strerror(errno);
    return false;
  }
  long r = wire::recv_frame(fd_, buf.data(), buf.size(), sys_read);
  if (r < 0) {
    *err = "the forwarder closed the connection without a reply";
    return false;
  }
  wire::Fields f;
  if (!wire::decode(buf.data(), static_cast<size_t>(r), f)) {
    *err = "malformed reply";
    return false;
  }
  reply->assign(f.f, f.f + f.n);
  return true;
}

namespace {

// Reports the closed versions still staged (at most a few named), for drain's error.
std::string staged_summary(const std::vector<StagedVersion>& staged, const SessionPaths& sp) {
  std::string out = std::to_string(staged.size()) + " closed file version" +
                    (staged.size() == 1 ? " is" : "s are") + " staged in " + sp.dir +
                    " and not committed (";
  for (size_t i = 0; i < staged.size() && i < 3; ++i)
    out += (i ? ", " : "") +
           (staged[i].path.empty() ? staged[i].meta + " (unreadable)" : staged[i].path);
  return out + (staged.size() > 3 ? ", ...)" : ")");
}

enum class Round { kDrained, kRetry, kFailed };

// One DRAIN on a connected forwarder. kRetry: it answered, but closed versions are still
// staged (closed while it drained, or left by a forwarder it did not recover).
Round drain_once(ForwarderClient& c, const SessionPaths& sp) {
  std::vector<std::string> reply;
  std::string err;
  if (!c.request({wire::kDrain}, &reply, &err)) {
    error("drain: " + err);
    return Round::kFailed;
  }
  if (reply.empty() || reply[0] != wire::kOk) {
    std::string why = reply.size() > 1 ? reply[1] : "?";
    long long e = 0;
    if (wire::parse_i64(why.c_str(), e) && e > 0) why = strerror(static_cast<int>(e));
    error("drain: the forwarder could not commit everything: " + why +
          " (its log and `ckptfwd stats` say more)");
    return Round::kFailed;
  }
  return closed_staged_versions(sp.dir).empty() ? Round::kDrained : Round::kRetry;
}

}  // namespace

int drain_forwarder(bool quiet_ok) {
  SessionPaths sp;
  if (!session_paths(sp)) {
    error(
        "drain: session path too long (shorten CKPTFWD_STAGE_DIR, CKPTFWD_JOB_ID or "
        "CKPTFWD_NODE_ID)");
    return 1;
  }
  constexpr int kRounds = 3;
  bool started = false;
  for (int round = 0; round < kRounds; ++round) {
    ForwarderClient c;
    std::string msg;
    switch (c.connect(&msg)) {
      case ForwarderClient::Connect::kNoForwarder: {
        // No forwarder, but versions a process closed may wait for one that is gone:
        // a new one recovers and commits them.
        std::vector<StagedVersion> staged = closed_staged_versions(sp.dir);
        if (staged.empty() && !started) {
          // Outside a batch system a drain with other globs (or none) names another job:
          // files another local job's processes closed and left staged are not "nothing".
          if (std::string others = local_jobs_with_staged(sp); !others.empty()) {
            error("drain: nothing staged for job " + std::string(sp.job) + " on node " + sp.node +
                  ", but " + others +
                  ". Fix: drain with that run's CKPTFWD_CAPTURE, or CKPTFWD_JOB_ID=<its job>");
            return 1;
          }
        }
        if (staged.empty()) {
          if (!quiet_ok)
            printf(
                started ? "drained: everything captured is committed\n" : "nothing to drain (%s)\n",
                msg.c_str());
          return 0;
        }
        std::string why;
        if (started || !start_forwarder(sp, &why)) {
          error("drain: " + staged_summary(staged, sp) + ": " +
                (started ? "the forwarder started to commit them is gone" : why));
          return 1;
        }
        started = true;
        if (!quiet_ok)
          printf("started a forwarder to commit %zu staged file version%s\n", staged.size(),
                 staged.size() == 1 ? "" : "s");
        continue;
      }
      case ForwarderClient::Connect::kError:
        error("drain: " + msg);
        return 1;
      case ForwarderClient::Connect::kOk:
        break;
    }
    switch (drain_once(c, sp)) {
      case Round::kDrained:
        if (!quiet_ok) printf("drained: everything captured is committed\n");
        return 0;
      case Round::kFailed:
        return 1;
      case Round::kRetry:
        break;
    }
  }
  error("drain: " + staged_summary(closed_staged_versions(sp.dir), sp) + " after " +
        std::to_string(kRounds) + " drains (the forwarder's log says why)");
  return 1;
}

}  // namespace ckptfwd::cli
