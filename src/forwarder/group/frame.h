// The messages forwarders of one job send each other over TCP (group.h). A frame is
//   u32 magic "CKFG" | u32 field count | per field: u32 length, bytes | u64 body length | body
// all little endian. Fields carry verbs, names and numbers as text; the body carries file
// bytes, which are streamed from and into file descriptors (never held whole in memory
// when they come from or go to a file). A peer is another forwarder of the same user's
// job that showed the job's secret, but its frames are still checked: a field count,
// field length or body length past the limits below ends the connection.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ckptfwd::fwd::group {

inline constexpr uint32_t kFrameMagic = 0x47464b43;  // "CKFG"
inline constexpr uint32_t kMaxFields = 64;
inline constexpr uint32_t kMaxFieldBytes = 64 << 10;
inline constexpr uint64_t kMaxBodyBytes = 1ull << 40;

struct Frame {
  std::vector<std::string> fields;
  std::string body;  // a body held in memory (small ones: extents lists)
};

// A piece of a file sent as part of a body: [off, off + len) of the body's fd.
struct Range {
  uint64_t off = 0, len = 0;
};
// Sends f: its body is f.body followed by the ranges of body_fd (when body_fd >= 0), read
// as they are sent. False with *err (the peer went away, or the file is shorter).
bool send_frame(int sock, const Frame& f, std::string* err, int body_fd = -1,
                const std::vector<Range>& ranges = {});
// Receives the fields of a frame and its body length; the body is then read with
// recv_body_*. False with *err on a closed connection or a malformed frame.
bool recv_head(int sock, Frame& f, uint64_t* body_len, std::string* err);
// The body into memory: refused (false) above max bytes.
bool recv_body(int sock, uint64_t len, std::string& out, uint64_t max, std::string* err);
// The body written to fd at offset off.
bool recv_body_to_fd(int sock, uint64_t len, int fd, uint64_t off, std::string* err);
// Reads and drops len bytes (a body nobody wants, so the connection stays usable).
bool skip_body(int sock, uint64_t len, std::string* err);
// A whole frame with its body in memory (at most max body bytes).
bool recv_frame(int sock, Frame& f, uint64_t max, std::string* err);

}  // namespace ckptfwd::fwd::group
