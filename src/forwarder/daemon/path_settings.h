// The path settings a forwarder writes to (CKPTFWD_LOG, CKPTFWD_STATS_FILE, CKPTFWD_STORE),
// checked at its start, before it detaches: once detached its stderr is /dev/null, so a
// path it cannot use would only be noticed when data or lines are missing. One it cannot
// use is a bad configuration naming the key, the value, the cause and the fix; the forwarder
// does not start and the library quotes the message (docs/settings.md).
#pragma once
#include <string>

#include "common/config.h"

namespace ckptfwd::fwd {

// A file to append to (a log or stats file; "", "stderr" and "syslog" need nothing): its
// directory exists and is one, and the file, if it exists, is not a directory.
bool usable_output_file(const char* key, const std::string& path, std::string* err);

// An explicit store (CKPTFWD_STORE; "" is the per-glob default, created at the first
// commit): created now if missing (mode 0700, as the first commit would), so a store that
// cannot be created is named at the start. A store that exists is fine even read-only
// (a restart only reads it).
bool usable_store(const std::string& store, std::string* err);

// All of the above for cfg.
bool check_path_settings(const Config& cfg, std::string* err);

}  // namespace ckptfwd::fwd
