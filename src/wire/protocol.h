// Wire protocol between the preload library (client) and the per-node forwarder.
//
// Transport: a SOCK_STREAM Unix socket at SessionPaths::socket_path. Every message is a
// frame: a little-endian uint32 payload length, then the payload. The payload is a list of
// fields separated by '\0' (paths cannot contain NUL); field 0 is the verb. One request,
// then exactly one reply, strictly in order on a connection.
//
// This header is dependency free and allocation free: the preload library uses it inside
// wrapped calls, so it works on caller-provided fixed buffers only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace ckptfwd::wire {

inline constexpr size_t kMaxFrame = 64 * 1024;  // hard cap; a larger frame is a protocol error
inline constexpr size_t kMaxFields = 64;
// Replies may be larger (LIST of a directory with thousands of captured names): up to
// kMaxReplyFrame, sent with send_reply_frame and read with recv_reply into a buffer the
// receiver sizes from the header. A reply with more
// than kMaxFields fields is walked raw (fields separated by NUL), not through Fields.
inline constexpr size_t kMaxReplyFrame = 16 * 1024 * 1024;

// ---- Requests (client -> forwarder). Fields after the verb, in order. ----
// HELLO  pid rank ["lease="] ["env=<digest>"] ["cap=<8 hex>"]
//                                       -> OK   ("lease=": the client takes leases, wire/lease.h)
//                                        | RETIRE  (a forwarder started early that has served
//                                               nobody and runs with other settings than
//                                               the client's "env=" (wire/settings_digest.h):
//                                               it leaves; the client waits until its socket
//                                               is gone and starts one of its own)
//   "cap=": the client's capture globs' digest (session.h capture_digest). A forwarder
//   started for other globs serves it all the same (its stores where the forwarder's
//   globs say: refused, a restart would not find its checkpoints) and posts a notice
//   (wire/notices.h) that every writing process of the session prints.
//   The optional fields are known by their content, in any order.
// OPEN   path flags(dec) mode(octal) [shared]
//                                       -> OK vid staged_path budget_bytes x|- [mode]
//                                        | PASS          (not ours: do the real open)
//                                        | ERR errno
//   vid "0" means a read-only view (no version created, nothing to CLOSE). For a write
//   version the forwarder created staged_path (0600) already holding the version's starting
//   bytes (empty for O_TRUNC / new files); the client opens staged_path with the
//   application's flags minus O_CREAT|O_EXCL|O_TRUNC. budget_bytes is how far the file may
//   grow in staging before the client must fall back to the real path ("-1": unlimited).
//   "x": the client records the byte ranges it writes and hands them over at CLOSE/SYNC
//   (the extents field below): the version is committed as the bytes written (a file
//   shared across nodes, or a new file: the `create` record of store/manifest/manifest.h); "-":
//   nothing to record. Older forwarders send four fields: read a missing one as "-".
//   A read-only view's reply adds the file's mode (octal) after "-", so the client needs
//   no STAT to show it; older forwarders leave it out (the client then asks STAT).
//   OPEN path flags mode "shared": the open is made inside MPI_File_open of a communicator
//   spanning several nodes (src/interpose/track/open_context.h). The forwarder joins the path's
//   open version or starts one (also without O_CREAT when the path is unknown here: a rank
//   on another node created it) and marks it partial: it is committed as a manifest
//   `overlay` holding only the byte extents this node's processes wrote into it.
// CLOSE  vid size [extents]             -> OK   (version handed over; returns at once)
//   extents: base name of a file in the session dir, "v<vid>.ext.<pid>.<seq>" (0600),
//   that the client wrote for a version whose OPEN reply said "x": little-endian u64 pairs [begin,
//   end) of the bytes this process wrote since its last hand-over, in one or more runs, each sorted
//   and disjoint. The forwarder owns the file from then on (keeps it until the version is
//   committed, so a restarted forwarder still finds it). No extents field on a shared version (or
//   an unreadable file): that process's extents are unknown; the forwarder then commits the staged
//   file's data extents (SEEK_DATA) and logs a warning.
//   Instead of a file, "whole=<end>": what this process wrote since its last hand-over is
//   exactly [0, end) ("whole=0": nothing), the extents of a file written front to back,
//   sent inline so that neither side creates, reads or deletes a file for them (CLOSE
//   only; the forwarder keeps it in the version's .meta for a recovery).
// SYNC   vid [extents]                  -> OK | ERR errno   (returns once vid is committed)
//   extents: as for CLOSE, the extents written since the last hand-over; the snapshot an
//   fsync of a shared version commits holds exactly the extents handed over so far.
// CLOSE and SYNC may end with an optional field "hints=<base name>": a dtype hints file
//   h<vid>.<pid>.<seq> in the session dir (format in base/dtype.h) of what this process
//   wrote through typed MPI-IO views since its last hand-over, on any version. It comes
//   after the extents field, which is simply absent when there is none: identify it by
//   its "hints=" prefix, never by position. The forwarder owns (and deletes) the file.
// CLOSE and SYNC may also end with "blocked=<ns>": the time this process spent inside its
//   captured calls on the version (writes, stdio flushes, fsyncs, closes) since its last
//   hand-over, for the checkpoint-interval advice (forwarder/state/ckpt_cost.h). After the
//   other optional fields; identified by its prefix too.
// WAITALL                               -> OK | ERR errno   (every version this connection
//                                                           closed is committed)
// ABANDON vid                           -> OK   (the client may write the real path: the
//                                               forwarder drops vid, counts a fallback,
//                                               records the path's fate as direct and
//                                               forgets older versions of the path so the
//                                               real file is what readers see)
//                                        | ERR EBUSY  (other processes hold vid open: the
//                                               client may not write the path directly
//                                               alone; nothing changes, it stays staged)
//   Sent before the client copies the staged bytes (it holds the staged file open first).
// One fate per path (wire/fate.h): a write OPEN of a path whose fate file says "direct"
//   is answered PASS (the library checks the file itself before asking, too); a new write
//   version claims "staged" for this forwarder until its last writer closes it. A read
//   OPEN of a "direct" path is PASS as well: the real file is the truth.
// STAT   path                           -> OK size mode(octal) mtime_sec mtime_nsec
//                                        | PASS | ERR errno
// RENAME old new                        -> OK | PASS | ERR errno
// UNLINK path                           -> OK | PASS | ERR errno
// LIST   dir                            -> OK name...   (captured names directly in dir)
// CHMOD  path mode(octal)               -> OK | PASS | ERR errno
//   The newest staged version of path takes the mode (its staged file stays 0600; the mode
//   is the version's, kept in its .meta); a path known only to the store's catalog gets a
//   manifest `chmod` record. PASS: not a captured file (do the real chmod). A staged file
//   found at CLOSE with bits other than 0600 was fchmod'ed directly: those bits win.
// REFRESH path                          -> OK | ERR errno
//   path's version open for writing here, if it is shared across nodes (partial), takes in
//   the store's content of path: its staged file is rewritten with the base and every
//   node's committed overlays (never shrinking it). Sent by the MPI_File_sync wrapper of a
//   file shared across nodes, by one process per node while all that node's processes
//   wait in a barrier, after each has synced (src/forwarder/verbs/refresh_verb.cc). Nothing open
//   here, or not partial: OK without change.
// STATS                                 -> OK json
// STATS vars                            -> OK json-lines (one object per variable, var_stats.h)
// DRAIN                                 -> OK | ERR errno (all pending versions committed)
inline constexpr const char* kHello = "HELLO";
inline constexpr const char* kOpen = "OPEN";
inline constexpr const char* kClose = "CLOSE";
inline constexpr const char* kSync = "SYNC";
inline constexpr const char* kWaitAll = "WAITALL";
inline constexpr const char* kAbandon = "ABANDON";
inline constexpr const char* kStat = "STAT";
inline constexpr const char* kRename = "RENAME";
inline constexpr const char* kUnlink = "UNLINK";
inline constexpr const char* kList = "LIST";
inline constexpr const char* kChmod = "CHMOD";
inline constexpr const char* kRefresh = "REFRESH";
inline constexpr const char* kStats = "STATS";
inline constexpr const char* kDrain = "DRAIN";
// Replies.
inline constexpr const char* kOk = "OK";
inline constexpr const char* kPass = "PASS";
inline constexpr const char* kErr = "ERR";
inline constexpr const char* kRetire = "RETIRE";

// A field "<prefix><exactly digits lowercase hex digits>" (digits <= 16): its value into v;
// false (v untouched) for anything else.
inline bool parse_hex_field(const char* field, const char* prefix, size_t digits, uint64_t& v) {
  const size_t p = strlen(prefix);
  if (strncmp(field, prefix, p) != 0 || strlen(field + p) != digits || digits > 16) return false;
  uint64_t x = 0;
  for (const char* s = field + p; *s; ++s) {
    int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;
    if (d < 0) return false;
    x = x << 4 | static_cast<uint64_t>(d);
  }
  v = x;
  return true;
}

// HELLO's "cap=<8 hex>": the client's capture digest (session.h capture_digest, nonzero).
inline constexpr char kCapturePrefix[] = "cap=";
inline bool format_capture(unsigned digest, char* buf, size_t cap) {
  int n = snprintf(buf, cap, "%s%08x", kCapturePrefix, digest);
  return n > 0 && static_cast<size_t>(n) < cap;
}
// Parses a field written by format_capture; false (digest untouched) for anything else.
inline bool parse_capture(const char* field, unsigned& digest) {
  uint64_t v = 0;
  if (!parse_hex_field(field, kCapturePrefix, 8, v)) return false;
  digest = static_cast<unsigned>(v);
  return true;
}

// A decoded message: pointers into the caller's buffer (valid while it lives).
struct Fields {
  const char* f[kMaxFields];
  size_t n = 0;
  const char* operator[](size_t i) const { return i < n ? f[i] : ""; }
};

// Builds a payload in buf from n C strings. Returns payload length, or 0 if it does not fit.
size_t encode(char* buf, size_t cap, const char* const* fields, size_t n);
// Splits a payload in place (buf must have room for one extra NUL at buf[len]).
bool decode(char* buf, size_t len, Fields& out);

// Blocking frame I/O on a socket, retrying EINTR and short transfers. The raw syscall
// pointers are injected so the preload library can pass its un-wrapped libc entry points.
using ReadFn = long (*)(int, void*, size_t);
using WriteFn = long (*)(int, const void*, size_t);
bool send_frame(int fd, const char* payload, size_t len, WriteFn wr);
// Reads one frame into buf (cap bytes, one kept for the NUL). Returns payload length or -1.
long recv_frame(int fd, char* buf, size_t cap, ReadFn rd);
// A reply frame of up to kMaxReplyFrame bytes.
bool send_reply_frame(int fd, const char* payload, size_t len, WriteFn wr);
// Reads one reply frame, usually in one read instead of two (header, then payload): the
// first read asks for up to cap - 1 bytes, and a small frame comes whole (send_frame
// writes header and payload at once). Only for a peer that sends nothing after the frame
// (one request, then its reply): bytes past it are a protocol error (false). The payload,
// NUL-terminated, is left inside buf (after the header) when it fits there, else read
// into what big(len + 1) gives (nullptr: false). *payload and *len say where it is.
using BigFn = char* (*)(size_t);
bool recv_reply(int fd, char* buf, size_t cap, ReadFn rd, BigFn big, char** payload, size_t* len);
// The payload length in a frame header (4 little-endian bytes).
size_t frame_length(const char* hdr);

// Small allocation-free helpers for numeric fields.
bool parse_i64(const char* s, long long& out);
bool parse_u64(const char* s, unsigned long long& out);
bool parse_octal(const char* s, unsigned& out);
// Ends of byte extents beyond this are refused, in an extents file (CLOSE, above) and in
// "whole=<end>": no file is that large, and sums of them cannot overflow.
inline constexpr uint64_t kMaxExtentEnd = uint64_t{1} << 62;
// The end of a file written whole from offset 0, as CLOSE's "whole=<end>" field and a
// version's .meta (common/staged_meta.h) give it: a decimal number 0..kMaxExtentEnd, else
// -1 (unknown).
int64_t parse_whole_end(const char* text);
// Writes v in decimal into buf (cap >= 24). Returns buf.
char* fmt_i64(char* buf, long long v);
char* fmt_octal(char* buf, unsigned v);

}  // namespace ckptfwd::wire
