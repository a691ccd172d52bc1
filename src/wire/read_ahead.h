// Frames read ahead on a stream whose peer may have several queued for the reader: the
// replies to requests a client sent without waiting for them (wire/lease.h), which the
// forwarder writes together when it found those requests queued (one write for all). Each
// read asks for all the room the buffer has, so k queued replies cost one read instead of
// 2k (a header, then its payload). A frame is handed out copied into the caller's buffer,
// NUL-terminated as recv_reply leaves it, or into big(len + 1) when it does not fit there.
//
// Allocation free: the preload library uses it inside wrapped calls, on a static buffer.
// Whoever replaces or drops the connection resets it: buffered bytes belong to one stream.
#pragma once
#include <cstddef>

#include "wire/protocol.h"

namespace ckptfwd::wire {

class ReadAhead {
 public:
  ReadAhead(char* buf, size_t cap) : buf_(buf), cap_(cap) {}
  void reset() { begin_ = end_ = 0; }
  // Nothing buffered, not even part of a frame.
  bool empty() const { return begin_ == end_; }
  // A whole frame is buffered: the next take() reads nothing from the stream.
  bool has_frame() const;
  // The next frame's payload, of at most limit bytes: into out (cap bytes, one kept for the
  // NUL) when it fits, else into big(len + 1) (nullptr: false). *payload and *len say
  // where. False at the end of the stream, on a read error (rd's errno kept) or a frame
  // over the limit; the stream is out of step then and the caller drops it.
  bool take(int fd, ReadFn rd, size_t limit, char* out, size_t cap, BigFn big, char** payload,
            size_t* len);

 private:
  bool fill(int fd, ReadFn rd, size_t want);
  char* buf_;
  size_t cap_;
  size_t begin_ = 0, end_ = 0;
};

}  // namespace ckptfwd::wire
