// Where a setting's value comes from, the same for the library, the forwarder and the CLI:
// the environment's CKPTFWD_<NAME>, else the last `name = value` line of the file named by
// CKPTFWD_CONFIG, else unset (the reader's default). The file: one `key = value` per line,
// keys the settings' names with or without the CKPTFWD_ prefix, any case; `#` starts a
// comment; blank lines are skipped; a line without `=` is a problem the readers report.
//
// Dependency free and allocation free (the preload library reads its settings through it
// at init): the file is read with raw system calls (never through the library's own
// wrappers) into a static buffer of kConfigFileMax bytes, again when the path or the file
// changes; a longer file, or one that is not a regular file (a FIFO would block), is a
// problem. Not for concurrent first calls from several threads with different
// CKPTFWD_CONFIG values: a process reads its settings at start.
#pragma once
#include <cstddef>

namespace ckptfwd::wire {

inline constexpr size_t kConfigFileMax = 64 << 10;
inline constexpr int kConfigLinesMax = 512;

// One line of a settings file, split in place: key and value trimmed, NUL-terminated
// inside the text; key nullptr for a line that has no '='.
struct ConfigLine {
  const char* key;
  const char* value;
  int line;  // 1-based
};

// Splits text (len bytes, NUL-terminated at text[len]) in place into its non-blank lines;
// returns how many were found (at most cap are stored: callers treat more as a problem).
int split_config_text(char* text, size_t len, ConfigLine* lines, int cap);

struct SettingOrigin {
  enum Kind { kUnset, kEnvironment, kFile } kind = kUnset;
  const char* file = nullptr;  // kFile: CKPTFWD_CONFIG's value
  int line = 0;                // kFile
};

// name: "CKPTFWD_<NAME>". nullptr when unset; an empty variable counts as unset (the
// file's value, else the default, as the library always took it). The
// pointer stays valid until CKPTFWD_CONFIG names another file or the file changes.
const char* setting_value(const char* name, SettingOrigin* from = nullptr);

// The lines of CKPTFWD_CONFIG's file (*lines, their count returned; 0 when unset or
// unreadable) and its path (*path), for a reader that checks every line (`ckptfwd config`).
int config_file_lines(const ConfigLine** lines, const char** path);

// The problem of CKPTFWD_CONFIG's file, or nullptr: "cannot be read", "is longer than ...",
// "line N: expected key = value". The forwarder refuses to start on it; the library
// says it once in its log.
const char* config_file_problem();

}  // namespace ckptfwd::wire
