// Whether a process that held a version is still there: the orphan reaper
// (Service::reap_orphans, verbs/orphans.cc), a recovery (daemon/recovery.cc) and the
// daemon's checks of other forwarders ask it.
#pragma once

namespace ckptfwd::fwd {

// Whether pid is a running process other than this forwarder (zombies count as gone: their
// fds are closed, they write nothing more). The forwarder's own pid is never a writer:
// in-process test clients going away behave like processes that died.
bool process_alive(long pid);

}  // namespace ckptfwd::fwd
