// Reaching the node's forwarder, for client.cc: a connection and its HELLO, the election
// of the process that starts the forwarder (a flock on the session's lock file), starting
// it (`forwarder --daemon`), and why it cannot be reached. Everything here runs under
// client.cc's connection lock, which guards the state below, except start_forwarder_early
// (client.h), which the library's init runs once (interpose/client/lifecycle.cc).
#pragma once

namespace ckptfwd::interpose {

// Why the forwarder could not be reached ("" if it could): unreachable_reason (client.h).
extern char g_reason[1024];
// Set when a check of interpose/setup/trust.h refused the session: retrying or starting a
// forwarder cannot help (the planted directory or socket stays), so stop at once.
extern bool g_refused;

// g_reason := "what: strerror(err)".
void set_reason(const char* what, int err);
// A refusal is logged at once (it names the path and the fix) and ends all tries.
void refuse(const char* why);

// One connect attempt plus HELLO. Returns the (moved) socket or -1 with g_reason set.
int try_connect();

// A connection to the session's forwarder (HELLO said), starting the forwarder when no
// process has and CKPTFWD_NO_SPAWN is not set: the socket, or -1 with g_reason set (and
// g_refused when the session directory or socket is not ours).
int reach_forwarder();

}  // namespace ckptfwd::interpose
