// Talking to the running forwarder of this job and node over its control socket.
#pragma once
#include <string>
#include <vector>

namespace ckptfwd::cli {

class ForwarderClient {
 public:
  ~ForwarderClient();
  enum class Connect { kOk, kNoForwarder, kError };
  // kNoForwarder: no socket, or nobody listening on it. *msg says which job/node/socket.
  Connect connect(std::string* msg);
  // One request, one reply (fields of the reply in *reply). False with *err on I/O error.
  bool request(const std::vector<std::string>& fields, std::vector<std::string>* reply,
               std::string* err);

 private:
  int fd_ = -1;
};

// Sends DRAIN and waits. Returns 0 drained (or nothing to drain), 1 failure; prints why
// unless quiet_ok (then nothing is printed on success or when no forwarder runs).
int drain_forwarder(bool quiet_ok);

}  // namespace ckptfwd::cli
