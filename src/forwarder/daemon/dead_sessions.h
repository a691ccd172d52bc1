// Session directories that a forwarder which is gone left in node memory.
//
// A forwarder that exits removes its session directory (forwarder.h); one that is killed
// (SIGKILL, the out-of-memory killer, a job's end that kills everything) leaves it in the
// staging root (/dev/shm by default), with its socket, lock, fate files, the read views it
// restored for readers (r<hash>.data: whole files) and any staged version it had not
// committed. The same job's next forwarder on the node recovers that directory
// (recovery.h); nobody else would, so a killed forwarder of an earlier job kept its read
// views in the node's memory until the node rebooted.
//
// sweep_dead_sessions is run by every forwarder as it starts. For each other session
// directory of this user in the staging root whose forwarder is gone (its lock is free:
// no process is starting one, and nothing listens on its socket), it removes the read
// views, which the store holds anyway, and then the whole directory, unless it holds a
// staged version to recover (by the rule of recovery.h: a .data with a non-empty .meta).
// Such a version is not in the store: the directory keeps it for the job's next
// forwarder, or `ckptfwd drain` run with that job's id, which commit it.
#pragma once
#include <string>

namespace ckptfwd::fwd {

// Sweeps stage_root (never own_dir, the caller's session directory), logging what it
// removed and what it kept.
void sweep_dead_sessions(const std::string& stage_root, const std::string& own_dir);

}  // namespace ckptfwd::fwd
