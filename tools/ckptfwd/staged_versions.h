// What a job's session directory on this node still holds uncommitted, and starting a
// forwarder that commits it: `ckptfwd drain` (and `ckptfwd run`) must not say "drained"
// while a version that a process closed waits in staging for a forwarder that is gone.
#pragma once
#include <string>
#include <vector>

#include "wire/session.h"

namespace ckptfwd::cli {

struct StagedVersion {
  std::string meta;  // its .meta file in the session directory (or where the journal has it)
  std::string path;  // the captured path it is a version of ("" if the .meta is unreadable)
};

// The closed versions staged in session dir `dir` (a .meta, or a description in the lease
// journal, saying state=closed beside its .data): a forwarder recovers and commits them;
// open ones still have writers. Nothing when dir is missing or not the caller's own.
std::vector<StagedVersion> closed_staged_versions(const std::string& dir);

// Starts `ckptfwd-forwarder --daemon` for this job and node with this process's
// environment (LD_PRELOAD dropped, relative path settings, kForwarderPathSettings of
// wire/session.h, and capture globs made absolute: the forwarder works in `/`), under
// the session's election lock like the library; its recovery then takes over the staged
// versions. Needs CKPTFWD_CAPTURE or CKPTFWD_STORE (which store a recovered version goes
// to depends on them). False with *why.
bool start_forwarder(const SessionPaths& sp, std::string* why);

// Capture globs made absolute against the current directory (colon separated).
std::string absolute_globs(const std::string& globs);

}  // namespace ckptfwd::cli
