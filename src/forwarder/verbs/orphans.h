// Versions held by processes without a connection (Version::orphans): after a forwarder
// restart or a lost connection, a writer that lives on may still CLOSE its version on a
// new connection; one that died leaves its file as written (Service::reap_orphans).
#pragma once

namespace ckptfwd::fwd {

// Whether pid is a running process other than this forwarder (zombies count as gone: their
// fds are closed, they write nothing more). The forwarder's own pid is never a writer:
// in-process test clients going away behave like processes that died.
bool process_alive(long pid);

}  // namespace ckptfwd::fwd
