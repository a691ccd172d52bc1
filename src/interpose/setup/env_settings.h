// The library's own reading of its CKPTFWD_* settings (README, "Settings"): yes/no
// switches parsed strictly, and path settings made absolute once, at init, against the
// cwd the job started in, so they mean the same thing after the application changes
// directory and in the forwarder (which runs in `/`). Allocation free.
#pragma once
#include <climits>
#include <cstddef>
#include <iterator>

#include "wire/session.h"

namespace ckptfwd::interpose {

// A yes/no setting: unset or empty -> dflt; 1/true/yes/on or 0/false/no/off (any case) as
// said; anything else -> a warning naming the key, the value and what is expected, and
// dflt (README: CKPTFWD_DISABLE=abc does not disable the library).
bool env_switch(const char* name, bool dflt);

// A whole number in [lo, hi]: unset or empty -> dflt; anything else -> a warning naming
// the key, the value and the range, and dflt.
long env_int(const char* name, long dflt, long lo, long hi);

// name's value made absolute into out (cap bytes); "" when unset, empty, or a word that
// names no file (wire/session.h, path_setting_keeps: "stderr", "syslog" of CKPTFWD_LOG).
// False, with a warning, when it cannot be made absolute (too long, cwd unknown); out is
// "" then.
bool env_abs_path(const char* name, char* out, size_t cap);

// The path settings handed to a forwarder this process starts (kForwarderPathSettings of
// wire/session.h), as "KEY=/abs/value" entries (spawn_forwarder replaces the relative
// originals with them).
struct AbsEnv {
  static constexpr int kMax = static_cast<int>(std::size(kForwarderPathSettings)) + 1;
  // CKPTFWD_CAPTURE too: every glob made absolute (the forwarder puts the store at their
  // literal directories, forwarder/util/store_paths.h), up to CaptureSet::kSpecBytes.
  char entry[kMax][16384 + 32];
  int n = 0;
};
// Fills env from the environment (at init).
void collect_abs_env(AbsEnv& env);
// The entry of env that replaces the environment entry `entry` (same KEY=), or nullptr.
const char* abs_replacement(const char* entry, const AbsEnv& env);

}  // namespace ckptfwd::interpose
