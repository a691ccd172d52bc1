// The library's sockets to the forwarder: descriptors placed above the range applications
// use, and one request and its reply on a socket, whose read gives up on a forwarder found
// stopped. Which socket, and what to do when an exchange fails, is client.cc's.
#pragma once
#include <cstddef>

#include "wire/protocol.h"
#include "wire/read_ahead.h"

namespace ckptfwd::interpose {

// A reply late this long while the forwarder was found stopped at every check fails the
// read with ETIMEDOUT (client_io.cc says why).
inline constexpr int kStoppedLimitMs = 10000;

// Moves fd to the library's descriptors (900 or above; half the descriptor limit when it
// is below 1024), close-on-exec; fd itself when that fails. reserve_high_fds (client.h)
// grows the table for them at init.
int move_high(int fd);

// The receive timeout the read of a reply wakes up by to look at the forwarder: set on a
// socket before its first exchange.
void set_check_timeout(int fd);

// A request sent on fd, encoded into buf (cap bytes). False on failure.
bool send_request(int fd, const char* const* fields, size_t n, char* buf, size_t cap);
// The reply that ends what is in flight on fd, read into buf (cap bytes) or, when it does
// not fit, into what big(size + 1) gives (nullptr: fail, the stream is out of step and
// the caller reconnects). *payload and *len say where its payload is. False on any
// failure; errno ETIMEDOUT when the forwarder is stopped.
bool receive_reply(int fd, char* buf, size_t cap, wire::BigFn big, char** payload, size_t* len,
                   wire::Fields& reply);
// The next reply on the main connection fd, whose replies may come several at once (those
// owed to requests sent without waiting, then the one waited for): read ahead through ra
// (wire/read_ahead.h), the payload copied into buf (cap bytes) or, larger, into what
// big(size + 1) gives (nullptr: small replies only). *payload and *len say where it is.
// False on any failure; errno ETIMEDOUT when the forwarder is stopped.
bool receive_ahead(int fd, wire::ReadAhead& ra, char* buf, size_t cap, wire::BigFn big,
                   char** payload, size_t* len, wire::Fields& reply);

// A request and its small reply through the caller's buffer (cap bytes): HELLO, and
// requests on a connection of their own (call_waiting). False on any failure.
bool exchange_small(int fd, const char* const* fields, size_t n, char* buf, size_t cap,
                    wire::Fields& reply);

}  // namespace ckptfwd::interpose
