// What the library trusts before it hands a checkpoint to a forwarder. The session
// directory lives in a shared, world-writable stage root (/dev/shm by default), so
// another user can plant a directory, a socket or a forwarder under our name there
// (docs/semantics.md, "Other users on the node"). Each check writes why it refused into why (naming
// the path and the fix); the caller then writes directly, as when the forwarder cannot be reached.
// Allocation free: called with the connection lock held, from inside wrapped calls.
#pragma once
#include <cstddef>

namespace ckptfwd::interpose {

enum class DirCheck { kOurs, kMissing, kRefused };

// The session directory dir must be a real directory (not a symbolic link), owned by our
// effective uid and closed to group and other (mode 0700, as the forwarder creates it).
DirCheck check_session_dir(const char* dir, char* why, size_t cap);

// The process serving the connected Unix socket fd (SO_PEERCRED) runs as our uid.
bool peer_is_self(int fd, const char* socket_path, const char* dir, char* why, size_t cap);

// A staged path from an OPEN reply is usable only if it is a plain file name directly in
// our session directory dir: "<dir>/<name>", name without '/' and not "." or "..".
bool staged_path_inside(const char* staged, const char* dir);

}  // namespace ckptfwd::interpose
