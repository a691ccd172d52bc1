// The replies of a forwarder to another node's request (group/frame.h frames without a
// body): a verb's result ("OK", "PASS", fields) or an errno ("ERR", decimal).
#pragma once
#include <cerrno>
#include <string>
#include <utility>
#include <vector>

#include "forwarder/group/frame.h"
#include "store/manifest/manifest_record.h"

namespace ckptfwd::fwd::peer_reply {

inline bool send(int sock, std::vector<std::string> fields) {
  std::string err;
  return group::send_frame(sock, group::Frame{std::move(fields), {}}, &err);
}

inline bool send_errno(int sock, int e) { return send(sock, {"ERR", std::to_string(e)}); }

// The errno in field i of a reply, or EIO (a missing or malformed one).
inline int errno_of(const std::vector<std::string>& f, size_t i) {
  uint64_t e = 0;
  return i < f.size() && manifest_record::parse_u64(f[i], e) && e > 0 && e < 4096
             ? static_cast<int>(e)
             : EIO;
}

// A request's path field: absolute (another node's word: checked before use).
inline bool is_path(const std::string& p) { return !p.empty() && p[0] == '/'; }

}  // namespace ckptfwd::fwd::peer_reply
