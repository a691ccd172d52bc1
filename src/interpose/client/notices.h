// The forwarder's notices (wire/notices.h) on this process's stderr, each once: a schema
// that does not fit, a store that refuses commits; the problems that change what the
// application gets, which under mpiexec would otherwise sit in a log nobody reads.
#pragma once

namespace ckptfwd::interpose {

// The activity page was mapped (a first forwarder, or a new one's page in a new session
// directory): its notices file is read from its start.
void notices_from_start();
// Prints the session's notices not printed yet (one atomic load when there are none):
// after a captured close and at exit, after the exit wait. So every process that reached
// the forwarder says each problem of its session once, those found before it started too
// (a setting the forwarder warned about at its start, a schema an earlier process's files
// did not fit, a store whose files a restart cannot see). errno kept; never fails the
// caller.
void print_new_notices();

}  // namespace ckptfwd::interpose
