// The control socket: bound 0600 at SessionPaths::socket, with the peer's uid checked on
// every connection.
#pragma once
#include <sys/types.h>

#include <string>

namespace ckptfwd::fwd {

enum class BindResult { kBound, kOtherLive, kFailed };

// A live forwarder answering on path -> kOtherLive (someone else won). A stale socket
// file is removed and the path bound. *fd: listening socket (CLOEXEC), *ino: its inode.
BindResult bind_control_socket(const std::string& path, int* fd, ino_t* ino, std::string* err);
// True when the connected peer runs as our uid.
bool peer_is_us(int fd, long* peer_pid);
// Connects to a control socket (clients and tests; the CLI has its own,
// tools/ckptfwd/forwarder_client.h). -1 with errno on failure.
int connect_control_socket(const std::string& path);

}  // namespace ckptfwd::fwd
