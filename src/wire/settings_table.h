// The table of ckptfwd's settings (settings.def beside this file) and the value rules
// every reader shares: one vocabulary of switches and one rule for numbers, so that a
// value means the same in the environment, in CKPTFWD_CONFIG's file, to the library, the
// forwarder and the CLI. Dependency free and allocation free: the preload library uses it.
#pragma once
#include <strings.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ckptfwd::wire {

enum SettingReader : unsigned { kLibrary = 1, kForwarder = 2, kCli = 4 };
enum class SettingLevel { kEssential, kTuning, kDebug };
enum class SettingKind { kSwitch, kNumber, kSize, kPath, kChoice, kText, kDuration };

inline constexpr long long kNoLimit = INT64_MAX;

struct SettingInfo {
  const char* name;  // without the CKPTFWD_ prefix
  unsigned readers;  // SettingReader bits
  SettingLevel level;
  SettingKind kind;
  long long lo, hi;  // kNumber, kSize
  const char* dflt;  // "" unset; "(...)" computed, described
};

namespace setting_detail {
using enum SettingLevel;
using enum SettingKind;
inline constexpr SettingInfo kTable[] = {
#define SETTING(NAME, READERS, LEVEL, KIND, LO, HI, DEFAULT) \
  {#NAME, READERS, LEVEL, KIND, LO, HI, DEFAULT},
#include "wire/settings.def"
#undef SETTING
};
}  // namespace setting_detail

inline constexpr const SettingInfo* settings_begin() { return setting_detail::kTable; }
inline constexpr const SettingInfo* settings_end() {
  return setting_detail::kTable + sizeof(setting_detail::kTable) / sizeof(SettingInfo);
}

// name with or without the CKPTFWD_ prefix, any case; nullptr when it is no setting.
inline const SettingInfo* find_setting(const char* name) {
  if (strncasecmp(name, "CKPTFWD_", 8) == 0) name += 8;
  for (const SettingInfo* s = settings_begin(); s != settings_end(); ++s)
    if (strcasecmp(s->name, name) == 0) return s;
  return nullptr;
}

// The one vocabulary of switches: 1/0, true/false, yes/no, on/off, any case. False (and
// *out untouched) for anything else.
inline bool parse_switch(const char* v, bool* out) {
  for (const char* yes : {"1", "true", "yes", "on"})
    if (strcasecmp(v, yes) == 0) return *out = true, true;
  for (const char* no : {"0", "false", "no", "off"})
    if (strcasecmp(v, no) == 0) return *out = false, true;
  return false;
}

// A whole number in [lo, hi]: digits only, a leading '-' only when lo < 0 (strtol would
// take " 5", "+5", "0x10" and wrap huge values).
inline bool parse_number(const char* v, long long lo, long long hi, long long* out) {
  bool neg = *v == '-' && lo < 0;
  if (neg) ++v;
  if (!*v || strlen(v) > 18) return false;
  long long x = 0;
  for (; *v; ++v) {
    if (*v < '0' || *v > '9') return false;
    x = x * 10 + (*v - '0');
  }
  if (neg) x = -x;
  if (x < lo || x > hi) return false;
  *out = x;
  return true;
}

}  // namespace ckptfwd::wire
