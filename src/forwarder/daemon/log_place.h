// Where the forwarder's log goes when CKPTFWD_LOG is unset. A detached forwarder has no
// terminal, and under mpiexec nobody reads its stderr: its lines must land in a file the
// user finds after the job, beside the checkpoints.
//
//   <store>/logs/<job>.<node>.log            the first store the settings name
//                                            (known_stores: CKPTFWD_STORE, else the
//                                            first capture glob's directory's .ckptfwd)
//   <stage root>/ckptfwd-log-<uid>-<job>-<node>.log   while that cannot be made: no capture
//                                            directory yet (the store is not made before
//                                            the application makes its directory), a
//                                            store that refuses, no capture glob
//
// The store's .ckptfwd (0700) and logs/ (0700) are made when missing, never the capture
// directory itself (an application may make it and fail on EEXIST). A forwarder that
// logged to the stage root moves its lines into the store's file at exit when it can
// then (settle_log_file); lines a forwarder left there (killed, or its store unreachable
// at its exit) are moved by the job's next forwarder on the node once it serves. Every forwarder of
// the job on the node appends to the same file; each line names its node, job and pid (util/log.h).
#pragma once
#include <string>

#include "common/config.h"
#include "wire/session.h"

namespace ckptfwd::fwd {

struct LogPlace {
  std::string preferred;  // <store>/logs/<job>.<node>.log ("" without a store)
  std::string fallback;   // <stage root>/ckptfwd-log-<uid>-<job>-<node>.log (not a session
                          // directory's name: ckptfwd-<uid>-...)
};
LogPlace log_place(const Config& cfg, const SessionPaths& paths);
// The file to log to now: preferred when its directory exists or could be made, else
// fallback.
std::string open_log_place(const LogPlace& place);
// The job's stats file beside the preferred log: <store>/logs/<job>.<node>.stats.jsonl
// ("" without a store).
std::string stats_place(const LogPlace& place);
// Makes the directories of a file of the store's logs/ (the store's .ckptfwd and logs/,
// 0700, never the directory the store sits in); true when they are there.
bool make_store_logs_dir(const std::string& file);
// When the lines went to place.fallback (used): appended to place.preferred (whose
// directory is made now if it can be) and the fallback removed. True if moved. At a
// forwarder's exit with its own lines; left_behind: another forwarder's, moved only when
// none writes it any more (none holds it: hold_fallback_log).
bool settle_log_file(const LogPlace& place, const std::string& used, bool left_behind = false);
// A forwarder logging to place.fallback (used) through fd holds it (a shared lock) while
// it lives, so that the next one does not move it from under it.
void hold_fallback_log(const LogPlace& place, const std::string& used, int fd);

}  // namespace ckptfwd::fwd
