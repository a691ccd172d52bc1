#include "forwarder_client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cli.h"
#include "common/protocol.h"
#include "common/session.h"

namespace ckptfwd::cli {

namespace {
long sys_read(int fd, void* p, size_t n) { return ::read(fd, p, n); }
long sys_write(int fd, const void* p, size_t n) { return ::write(fd, p, n); }

std::string job_id() {
  for (const char* n : {"CKPTFWD_JOB_ID", "SLURM_JOB_ID", "PBS_JOBID"})
    if (const char* v = getenv(n); v && *v) return v;
  return "0";
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
  std::string who = "job " + job_id() + " on node " + sp.node + " (socket " + sp.socket + ")";
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
      *msg = "no forwarder running for " + who;
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

int drain_forwarder(bool quiet_ok) {
  ForwarderClient c;
  std::string msg;
  switch (c.connect(&msg)) {
    case ForwarderClient::Connect::kNoForwarder:
      if (!quiet_ok) printf("nothing to drain (%s)\n", msg.c_str());
      return 0;
    case ForwarderClient::Connect::kError:
      error("drain: " + msg);
      return 1;
    case ForwarderClient::Connect::kOk:
      break;
  }
  std::vector<std::string> reply;
  std::string err;
  if (!c.request({wire::kDrain}, &reply, &err)) {
    error("drain: " + err);
    return 1;
  }
  if (!reply.empty() && reply[0] == wire::kOk) {
    if (!quiet_ok) printf("drained: everything captured is committed\n");
    return 0;
  }
  std::string why = reply.size() > 1 ? reply[1] : "?";
  long long e = 0;
  if (wire::parse_i64(why.c_str(), e) && e > 0) why = strerror(static_cast<int>(e));
  error("drain: the forwarder could not commit everything: " + why +
        " (its log and `ckptfwd stats` say more)");
  return 1;
}

}  // namespace ckptfwd::cli
