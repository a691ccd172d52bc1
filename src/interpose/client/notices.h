// The forwarder's notices (wire/notices.h) on this process's stderr, each once: a schema
// that does not fit, a store that refuses commits; the problems that change what the
// application gets, which under mpiexec would otherwise sit in a log nobody reads.
#pragma once

namespace ckptfwd::interpose {

// The activity page at base was mapped (a first or a new forwarder): the notices appended
// before now are not this process's to print.
void notices_from_now(void* base);
// Prints the notices appended since (one atomic load when there are none): after a
// captured close and at exit, after the exit wait. errno kept; never fails the caller.
void print_new_notices();

}  // namespace ckptfwd::interpose
