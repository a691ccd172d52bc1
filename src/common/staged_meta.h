// A staged version's .meta: the file beside its staged bytes in the session dir
// (wire/session.h: v<vid>.meta beside v<vid>.data) that lets a restarted forwarder recover
// the version, and tells `ckptfwd drain` whether a closed version still waits there. The
// forwarder writes it (forwarder/staging/staging.h, write_meta, which also says how it is
// put down whole) and reads it at recovery; the CLI reads it
// (tools/ckptfwd/staged_versions.cc). Both through format_meta and parse_meta.
//
// Text, one "key=value" line each, written in this order:
//   path=<path>            the captured path, absolute, with '%', '\n' and '\r' written as
//                          %XX (two hex digits), so that no name can break a line
//   rank=<decimal>
//   mode=<octal>           the version's permission bits
//   pid=<decimal>          the process that opened it
//   partial=1              only when shared across nodes
//   extents_unknown=1      only when some writer's extents never arrived
//   created=1              only for a new file
//   whole=<end>            only when known: extents [0, end) handed over without a file
//                          (wire/protocol.h, CLOSE)
//   state=closed           then closer=<pid>, the process whose CLOSE closed it;
//   state=open             or, while open, holders=<pid>:<refs>,... when there are any
// A reader takes the lines in any order and passes over empty lines (an in-place rewrite
// pads with them), lines without '=' and unknown keys; a field without its line keeps its
// default. No state line: open.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ckptfwd {

struct VersionMeta {
  std::string path;
  int rank = -1;
  uint32_t mode = 0644;
  long pid = 0;
  bool partial = false;          // shared across nodes: committed as an overlay
  bool extents_unknown = false;  // some writer's extents never arrived
  bool created = false;          // a new file, committed as an overlay (Version::created)
  int64_t whole = -1;            // Version::whole_prefix: extents [0, whole) without a file
  // When it was opened (CLOCK_REALTIME ns; 0: not said): a recovery orders the versions of
  // a path by it, as a leased one's vid was taken before its open (wire/lease.h).
  int64_t opened_ns = 0;
  // The recovery protocol: a version is committed after a crash only if its .meta says it
  // was closed (state=closed). An open one (state=open, or no state line) stays open for
  // its holders (pid:refs), who may still CLOSE it. Staged files without a .meta are
  // incomplete (a copy of old bytes or an fsync snapshot in progress: the .meta is written
  // when the copy is done) and are deleted.
  bool closed = false;
  long closer = 0;                              // pid whose CLOSE closed it
  std::vector<std::pair<long, int>> holders{};  // open: (pid, references)
};

// The .meta text of m.
std::string format_meta(const VersionMeta& m);
// Parses .meta text into m; a field without its line keeps the value m has. True when the
// text has a path= line (whether its path will do, absolute, is the caller's to judge).
bool parse_meta(const std::string& text, VersionMeta& m);
// Reads the .meta at path (never through a symbolic link) and parses it into m. False with
// *err when it cannot be opened, is empty or cannot be read, or has no path= line.
bool read_meta_file(const std::string& path, VersionMeta& m, std::string* err);

}  // namespace ckptfwd
