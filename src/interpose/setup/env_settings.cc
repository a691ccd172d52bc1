#include "interpose/setup/env_settings.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cstdio>

#include "interpose/setup/state.h"
#include "wire/session.h"
#include "wire/setting_value.h"
#include "wire/settings_digest.h"
#include "wire/settings_table.h"

namespace ckptfwd::interpose {

namespace {

// " (CKPTFWD_CONFIG's FILE:LINE)" for a value from the file, "" for the environment's.
void origin_text(const wire::SettingOrigin& from, char* out, size_t cap) {
  out[0] = '\0';
  if (from.kind == wire::SettingOrigin::kFile)
    snprintf(out, cap, " (from %s:%d)", from.file, from.line);
}

}  // namespace

const char* env_value(const char* name) { return wire::setting_value(name); }

bool env_switch(const char* name) {
  const wire::SettingInfo* info = wire::find_setting(name);
  bool dflt = false;
  if (info) wire::parse_switch(info->dflt, &dflt);
  wire::SettingOrigin from;
  const char* v = wire::setting_value(name, &from);
  bool out = dflt;
  if (!v || !*v || wire::parse_switch(v, &out)) return out;
  char where[4200];
  origin_text(from, where, sizeof(where));
  log_msg(
      "warning: %s='%s'%s: expected 1/0, true/false, yes/no or on/off; using the default "
      "(%s)",
      name, v, where, dflt ? "1" : "0");
  return dflt;
}

long env_int(const char* name) {
  const wire::SettingInfo* info = wire::find_setting(name);
  long long lo = info ? info->lo : 0, hi = info ? info->hi : 0, dflt = 0;
  if (info) wire::parse_number(info->dflt, lo, hi, &dflt);
  wire::SettingOrigin from;
  const char* v = wire::setting_value(name, &from);
  long long n = dflt;
  if (!v || !*v || wire::parse_number(v, lo, hi, &n)) return static_cast<long>(n);
  char where[4200];
  origin_text(from, where, sizeof(where));
  log_msg("warning: %s='%s'%s: expected a whole number %lld..%lld; using the default (%lld)", name,
          v, where, lo, hi, dflt);
  return static_cast<long>(dflt);
}

bool env_abs_path(const char* name, char* out, size_t cap) {
  out[0] = '\0';
  const char* v = wire::setting_value(name);
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

uint64_t launch_settings_digest(const AbsEnv& env) {
  uint64_t sum =
      wire::settings_digest(environ, [&env](const char* e) { return abs_replacement(e, env); });
  for (int i = 0; i < env.n; ++i) {
    const char* eq = strchr(env.entry[i], '=');
    const size_t k = static_cast<size_t>(eq - env.entry[i]) + 1;
    bool replaces = false;
    for (size_t j = 0; environ && environ[j] && !replaces; ++j)
      replaces = strncmp(environ[j], env.entry[i], k) == 0;
    if (!replaces && wire::is_settings_entry(env.entry[i]))
      sum += wire::settings_entry_hash(env.entry[i]);
  }
  return sum;
}

}  // namespace ckptfwd::interpose
