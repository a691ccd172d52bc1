// Notices: the few problems that change what the application gets (a schema that does not
// fit its files, a store that refuses commits) said on the application's stderr as well as
// in the forwarder's log, since under mpiexec nobody reads that log during the job.
//
//   <session dir>/notices   0600, lines the forwarder appends, each once per forwarder,
//                           at most kMaxLine bytes with its newline
//   activity page word kNoticesOffset (wire/activity.h): the file's length after the
//                           forwarder's last append (it only grows while the session
//                           directory lives)
//
// A process under the library prints the file's lines, each once, prefixed "ckptfwd: "
// (interpose/client/notices.h): so every process of the job that writes says each problem
// of its session once on its own stderr, those found before it started too. The word says
// when to look: the library reads the file itself, checks that it is a regular file of its
// user's, and prints at most kMaxLine bytes per line, control bytes replaced.
// Allocation free (the preload library uses it).
#pragma once
#include <cstddef>

namespace ckptfwd::wire {

inline constexpr char kNoticesFile[] = "notices";
inline constexpr size_t kMaxNoticeLine = 1024;

}  // namespace ckptfwd::wire
