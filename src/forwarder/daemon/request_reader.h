// The requests of one client connection, read with as few reads as it takes: usually one
// per request instead of two (header, then payload), as the library writes a request's
// header and payload at once (wire/protocol.cc). A client that sent its next request
// before the reply to the last one leaves bytes past the frame: kept for the next call.
#pragma once
#include <cstddef>
#include <vector>

#include "wire/protocol.h"

namespace ckptfwd::fwd {

class RequestReader {
 public:
  // Bytes of the next request are here already: no need to wait on the socket for them.
  bool buffered() const { return !carry_.empty(); }
  // A whole request is here already (the client sent it without waiting for the last
  // reply): the next call reads nothing from the socket.
  bool has_request() const {
    return carry_.size() >= 4 && carry_.size() - 4 >= wire::frame_length(carry_.data());
  }
  // Reads the next request from fd: its payload (NUL-terminated, inside this reader until
  // the next call) and its length, or -1 when the peer hung up or sent a frame over
  // wire::kMaxFrame.
  long next(int fd, char** payload);

 private:
  std::vector<char> buf_ = std::vector<char>(4 + wire::kMaxFrame + 1);
  std::vector<char> carry_;
};

}  // namespace ckptfwd::fwd
