// A write open on the lease the forwarder handed this process's connection (wire/lease.h):
// no wait for the forwarder, whose OPEN reply is read before the next request's.
#pragma once
#include <sys/types.h>

#include "interpose/track/versions.h"

namespace ckptfwd::interpose {

// When the open of norm fits a lease (O_CREAT|O_TRUNC, no O_EXCL, not shared across nodes, a
// regular file or a new one in an existing directory, no fate file: nobody on the node
// writes it now) and the connection has one: claims norm's fate, sends the leased OPEN,
// fills r as an OPEN reply would (kOk, the leased staged file, extents recorded) and
// returns true. False otherwise (at most the lease spent, or a claim left that the next
// OPEN of norm takes over): the caller asks with OPEN as usual.
bool open_on_lease(const char* norm, int flags, mode_t mode, OpenReply& r);

}  // namespace ckptfwd::interpose
