// The settings a process runs with, as one number: the HELLO's "env=<16 hex digits>".
//
// A forwarder takes its settings (store, codec, schema, ...) from the environment of the
// process that starts it. A library starts one at its own start (the early start,
// interpose/client/client.h), and that process is not always the application: `env
// CKPTFWD_STORE=... app` runs the library in `env` first, with the settings the application
// does not see yet. The first HELLO then tells the forwarder which settings its client
// has; a forwarder started early that has served nobody and finds them different retires
// (wire/protocol.h, RETIRE) for one started with the client's.
//
// The digest covers every CKPTFWD_* variable but the two a start passes to the forwarder
// alone (CKPTFWD_ELECTION_FD, CKPTFWD_STARTED_FOR) and those an exec hands to the new
// program (CKPTFWD_ADOPT*, interpose/wrap/wrap_exec.cc), each as the forwarder would get it (the
// library hands on path settings made absolute, env_settings.h): the sum of the entries'
// FNV-1a hashes, so the variables' order does not count.
// Dependency free and allocation free (the preload library uses it).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "wire/protocol.h"

namespace ckptfwd::wire {

inline constexpr char kSettingsPrefix[] = "env=";

// True for the variables an early start passes to the forwarder alone (its election
// descriptor and its starter's pid): the library removes them from what it hands on.
inline bool is_start_entry(const char* entry) {
  return strncmp(entry, "CKPTFWD_ELECTION_FD=", 20) == 0 ||
         strncmp(entry, "CKPTFWD_STARTED_FOR=", 20) == 0;
}

// True for an environment entry the digest covers.
inline bool is_settings_entry(const char* entry) {
  return strncmp(entry, "CKPTFWD_", 8) == 0 && !is_start_entry(entry) &&
         strncmp(entry, "CKPTFWD_ADOPT", 13) != 0;
}

inline uint64_t settings_entry_hash(const char* entry) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(entry); *p; ++p) {
    h ^= *p;
    h *= 1099511628211ull;
  }
  return h;
}

// The digest of env (NULL-terminated, as environ). replace(entry) may return the entry the
// forwarder gets instead (nullptr: entry as it is).
template <typename Replace>
uint64_t settings_digest(char* const* env, Replace replace) {
  uint64_t sum = 0;
  for (size_t i = 0; env && env[i]; ++i) {
    if (!is_settings_entry(env[i])) continue;
    const char* r = replace(env[i]);
    sum += settings_entry_hash(r ? r : env[i]);
  }
  return sum;
}

// The digest of env as it is (the forwarder's own environment).
inline uint64_t settings_digest(char* const* env) {
  return settings_digest(env, [](const char*) -> const char* { return nullptr; });
}

// "env=<16 hex>" into buf; false if it does not fit.
inline bool format_settings(uint64_t digest, char* buf, size_t cap) {
  int n = snprintf(buf, cap, "%s%016llx", kSettingsPrefix, static_cast<unsigned long long>(digest));
  return n > 0 && static_cast<size_t>(n) < cap;
}

// Parses a field written by format_settings; false (digest untouched) for anything else.
inline bool parse_settings(const char* field, uint64_t& digest) {
  return parse_hex_field(field, kSettingsPrefix, 16, digest);
}

}  // namespace ckptfwd::wire
