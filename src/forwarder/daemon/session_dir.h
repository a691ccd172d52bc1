// The per-job session directory: created 0700, and refused when someone else could have
// planted it (not ours, or open to group/other).
#pragma once
#include <string>

namespace ckptfwd::fwd {
bool prepare_session_dir(const std::string& stage_root, const std::string& dir, std::string* err);
}  // namespace ckptfwd::fwd
