// The forwarder's side of a captured path's fate (common/fate.h): it claims "staged"
// while a write version of the path is open here, turns it "direct" when it lets a path
// fall back, and answers the OPEN of a path that fell back with PASS. Called under
// State::mu, so the forwarder's own claims never race each other.
#pragma once
#include <string>

#include "common/fate.h"

namespace ckptfwd::fwd {

// Before a new write version of path: kStaged (claimed for this forwarder, or the fate
// file cannot be written: staging goes on as before) or kDirect (some process of this job
// writes path directly: the caller answers PASS).
fate::Fate claim_staged_fate(const std::string& session_dir, const std::string& path);
// path's fate is direct from now on (its only writer fell back, or it cannot be staged).
void make_fate_direct(const std::string& session_dir, const std::string& path);
// No write version of path is open here any more: this forwarder's staged claim goes.
void release_staged_fate(const std::string& session_dir, const std::string& path);
// True if path's fate is direct.
bool fate_is_direct(const std::string& session_dir, const std::string& path);

}  // namespace ckptfwd::fwd
