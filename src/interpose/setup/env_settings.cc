#include "interpose/setup/env_settings.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cstdio>

#include "interpose/setup/state.h"
#include "wire/session.h"

namespace ckptfwd::interpose {

bool env_switch(const char* name, bool dflt) {
  const char* v = getenv(name);
  if (!v || !*v) return dflt;
  for (const char* yes : {"1", "true", "yes", "on"})
    if (strcasecmp(v, yes) == 0) return true;
  for (const char* no : {"0", "false", "no", "off"})
    if (strcasecmp(v, no) == 0) return false;
  log_msg(
      "warning: %s='%s': expected 0/1, true/false, yes/no or on/off; using the default "
      "(%s)",
      name, v, dflt ? "1" : "0");
  return dflt;
}

long env_int(const char* name, long dflt, long lo, long hi) {
  const char* v = getenv(name);
  if (!v || !*v) return dflt;
  char* end = nullptr;
  long n = strtol(v, &end, 10);
  if (*end == '\0' && n >= lo && n <= hi) return n;
  log_msg("warning: %s='%s': expected a whole number %ld..%ld; using the default (%ld)", name, v,
          lo, hi, dflt);
  return dflt;
}

bool env_abs_path(const char* name, char* out, size_t cap) {
  out[0] = '\0';
  const char* v = getenv(name);
  if (!v || !*v || path_setting_keeps(name, v)) return true;
  if (normalize_path(v, nullptr, out, cap)) return true;
  out[0] = '\0';
  log_msg(
      "warning: %s='%s': expected a path that fits in %zu bytes once made absolute "
      "(against the current directory); ignoring it",
      name, v, cap);
  return false;
}

void collect_abs_env(AbsEnv& env) {
  env.n = 0;
  for (const char* name : kForwarderPathSettings) {
    char abs[PATH_MAX];
    if (!env_abs_path(name, abs, sizeof(abs)) || !abs[0]) continue;
    if (env.n >= AbsEnv::kMax) break;
    snprintf(env.entry[env.n++], sizeof(env.entry[0]), "%s=%s", name, abs);
  }
  // The capture globs as the library uses them (relative ones made absolute at init).
  if (g_capture.empty() || env.n >= AbsEnv::kMax) return;
  char* out = env.entry[env.n];
  size_t cap = sizeof(env.entry[0]);
  size_t len = static_cast<size_t>(snprintf(out, cap, "CKPTFWD_CAPTURE="));
  for (size_t i = 0; i < g_capture.count(); ++i) {
    size_t n = strlen(g_capture.pattern(i));
    // All the globs or none: a child given some of them would capture less than its
    // parent; without the entry it keeps the CKPTFWD_CAPTURE it inherits.
    if (len + n + 2 > cap) return;
    if (i > 0) out[len++] = ':';
    memcpy(out + len, g_capture.pattern(i), n + 1);
    len += n;
  }
  ++env.n;
}

const char* abs_replacement(const char* entry, const AbsEnv& env) {
  for (int i = 0; i < env.n; ++i) {
    const char* eq = strchr(env.entry[i], '=');
    size_t k = static_cast<size_t>(eq - env.entry[i]) + 1;
    if (strncmp(entry, env.entry[i], k) == 0) return env.entry[i];
  }
  return nullptr;
}

}  // namespace ckptfwd::interpose
