// The library's own reading of its CKPTFWD_* settings (docs/settings.md): each from the
// environment, else CKPTFWD_CONFIG's file (wire/setting_value.h), with the default, the
// range and the vocabulary of the settings table (wire/settings.def); path settings made
// absolute once, at init, against the cwd the job started in, so they mean the same
// thing after the application changes directory and in the forwarder (which runs in
// `/`). Allocation free.
#pragma once
#include <climits>
#include <cstddef>
#include <cstdint>
#include <iterator>

#include "wire/session.h"

namespace ckptfwd::interpose {

// A switch of the table: unset or empty -> its default; 1/true/yes/on or 0/false/no/off
// (any case) as said; anything else -> a warning naming the key, the value, where it was
// set and what is expected, and the default (CKPTFWD_DISABLE=abc does not disable the
// library).
bool env_switch(const char* name);

// A number of the table, in its range: unset or empty -> its default; anything else -> a
// warning naming the key, the value, where it was set and the range, and the default.
long env_int(const char* name);

// The setting's value (environment, else CKPTFWD_CONFIG's file); nullptr when unset.
const char* env_value(const char* name);

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
// The settings digest (wire/settings_digest.h) of the environment a forwarder this process
// starts gets (client_connect.cc, launch_forwarder): environ with env's replacements, and
// env's entries that replace none (settings taken from CKPTFWD_CONFIG's file) added.
uint64_t launch_settings_digest(const AbsEnv& env);

}  // namespace ckptfwd::interpose
