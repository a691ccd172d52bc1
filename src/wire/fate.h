// One fate per captured path per node and job: a path is written either through staging
// (the forwarder commits it) or directly to its real path, never both at once by
// different processes (each copy would lack the other's bytes).
//
// The fate lives in a file of the session directory, "fate.<16 hex digits of the path's
// hash>" (0600 in the 0700 session dir), so that a process that cannot reach the
// forwarder still sees it. It is created atomically with its content (written under a
// temporary name, then link()ed: the first creator wins) and holds one line for the fate,
// and one for the path:
//   "staged <forwarder pid>\n<path>\n"  a write version of path is open in that forwarder;
//                                       removed by it when the path's last writer closed
//   "staged <forwarder pid>\n"          the same without the path line: the forwarder's
//                                       common claim, one link() of its claim file
//                                       ("fate.staged.<pid>", holding just that line)
//                                       under the fate's name instead of a file written
//                                       per path (most of an OPEN's cost for a small
//                                       file). A name two paths share (a collision of
//                                       the 64-bit hash) then reads as staged for both:
//                                       at worst a fallback fails with EIO, never a split
//   "direct\n<path>\n"                  some process writes path directly; kept for the
//                                       rest of the job (the session directory with it)
// Nobody writes into a fate file: a fate changes by a rename over its name, so the claim
// file's other names keep their content.
// Who writes it: the forwarder claims "staged" when it opens a new write version (an
// existing "direct" makes it answer OPEN with PASS), and turns it to "direct" when it
// lets the only writer of a version fall back (ABANDON). A library that falls back
// without the forwarder (unreachable, CLOSE refused) claims "direct"; it may not while a
// live forwarder holds "staged" (another process writes the path through staging), and
// then fails the call with EIO instead. A "staged" claim of a forwarder that is gone is
// stale and may be replaced. Every write OPEN checks the fate on both sides.
//
// Allocation free: the preload library uses it.
#pragma once
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ckptfwd::fate {

enum class Fate { kNone, kStaged, kDirect };

inline unsigned long long fate_hash(const char* path) {
  unsigned long long h = 1469598103934665603ull;  // FNV-1a
  for (const unsigned char* p = reinterpret_cast<const unsigned char*>(path); *p; ++p) {
    h ^= *p;
    h *= 1099511628211ull;
  }
  return h;
}

// "<dir>/fate.<hash>". False if it does not fit.
inline bool fate_file(const char* dir, const char* path, char* out, size_t cap) {
  int n = snprintf(out, cap, "%s/fate.%016llx", dir, fate_hash(path));
  return n > 0 && static_cast<size_t>(n) < cap;
}

// The content for a fate (kStaged: with pid). Returns its length, 0 if it does not fit.
inline size_t fate_text(Fate f, long pid, const char* path, char* out, size_t cap) {
  int n = f == Fate::kStaged ? snprintf(out, cap, "staged %ld\n%s\n", pid, path)
                             : snprintf(out, cap, "direct\n%s\n", path);
  return n > 0 && static_cast<size_t>(n) < cap ? static_cast<size_t>(n) : 0;
}

// "<dir>/fate.staged.<pid>": forwarder pid's claim file, linked under a fate's name for
// each path it stages (a leased open's client links it itself, wire/lease.h). False if it
// does not fit.
inline bool claim_file(const char* dir, long pid, char* out, size_t cap) {
  int n = snprintf(out, cap, "%s/fate.staged.%ld", dir, pid);
  return n > 0 && static_cast<size_t>(n) < cap;
}

// The content of a forwarder's claim file (kStaged without the path line). Its length,
// 0 if it does not fit.
inline size_t claim_text(long pid, char* out, size_t cap) {
  int n = snprintf(out, cap, "staged %ld\n", pid);
  return n > 0 && static_cast<size_t>(n) < cap ? static_cast<size_t>(n) : 0;
}

// Parses a fate file's content (NUL-terminated). kNone when it is not about path (a hash
// collision) or not readable as a fate. *named (if given): the content names path (false
// for a claim file's "staged <pid>\n").
inline Fate parse_fate(const char* text, const char* path, long* pid, bool* named = nullptr) {
  const char* nl = strchr(text, '\n');
  if (!nl) return Fate::kNone;
  size_t plen = strlen(path);
  const bool pathless = nl[1] == '\0' && strncmp(text, "staged ", 7) == 0;
  if (named) *named = !pathless;
  if (!pathless && (strncmp(nl + 1, path, plen) != 0 || nl[1 + plen] != '\n')) return Fate::kNone;
  if (strncmp(text, "direct\n", 7) == 0) return Fate::kDirect;
  if (strncmp(text, "staged ", 7) != 0) return Fate::kNone;
  char* end = nullptr;
  long p = strtol(text + 7, &end, 10);
  if (end != nl || p <= 0) return Fate::kNone;
  if (pid) *pid = p;
  return Fate::kStaged;
}

}  // namespace ckptfwd::fate
