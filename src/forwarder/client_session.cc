#include "forwarder/client_session.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/spin_wait.h"
#include "forwarder/log.h"

namespace ckptfwd::fwd {

namespace {
long read_fn(int fd, void* p, size_t n) { return ::read(fd, p, n); }
// MSG_NOSIGNAL: a client that died must not kill the forwarder with SIGPIPE.
long send_fn(int fd, const void* p, size_t n) { return ::send(fd, p, n, MSG_NOSIGNAL); }

bool send_reply(int fd, const Reply& r, std::vector<char>& out) {
  std::vector<const char*> fields;
  size_t need = 0;
  for (const std::string& s : r) {
    fields.push_back(s.c_str());
    need += s.size() + 1;
  }
  // Most replies fit the usual frame; a long LIST grows the buffer (up to the reply cap).
  if (need > out.size() && need <= wire::kMaxReplyFrame) out.resize(need);
  size_t len = wire::encode(out.data(), out.size(), fields.data(), fields.size());
  if (len == 0) {
    LOG_ERROR("reply does not fit in one frame; sending EIO instead");
    const char* e[] = {wire::kErr, "5"};
    len = wire::encode(out.data(), out.size(), e, 2);
  }
  bool ok = wire::send_reply_frame(fd, out.data(), len, send_fn);
  if (out.size() > wire::kMaxFrame) {  // do not keep megabytes per idle connection
    out.resize(wire::kMaxFrame);
    out.shrink_to_fit();
  }
  return ok;
}
// Requests of one connection, usually one read each (header and payload come in one
// write, common/protocol.cc): the first read asks for what the buffer holds. A client
// that sent its next request early leaves bytes past the frame: kept for the next call.
class RequestReader {
 public:
  // Bytes of the next request already here: no need to wait on the socket for them.
  bool buffered() const { return !carry_.empty(); }
  // The next request's payload (NUL-terminated) and its length, or -1 when the peer hung
  // up or sent a frame over the limit.
  long next(int fd, char** payload) {
    size_t have = carry_.size();
    if (have) memcpy(buf_.data(), carry_.data(), have);
    carry_.clear();
    const size_t cap = buf_.size() - 1;  // one byte for the NUL after the payload
    auto fill = [&](size_t want) {
      while (have < want) {
        long r = read_fn(fd, buf_.data() + have, cap - have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        have += static_cast<size_t>(r);
      }
      return true;
    };
    if (!fill(4)) return -1;
    size_t n = wire::frame_length(buf_.data());
    if (n > wire::kMaxFrame || !fill(4 + n)) return -1;
    carry_.assign(buf_.data() + 4 + n, buf_.data() + have);
    buf_[4 + n] = '\0';
    *payload = buf_.data() + 4;
    return static_cast<long>(n);
  }

 private:
  std::vector<char> buf_ = std::vector<char>(4 + wire::kMaxFrame + 1);
  std::vector<char> carry_;
};
}  // namespace

void serve_client(Service& svc, int fd, uint64_t client_id, long peer_pid, int spin_us) {
  ClientCtx cl;
  cl.id = client_id;
  cl.pid = peer_pid;
  RequestReader requests;
  std::vector<char> out(wire::kMaxFrame);
  // A process writing many small files sends its next OPEN a few microseconds after the
  // last reply: this session then polls for it instead of sleeping (a wake-up per
  // request); one that waited longer than spin_us for its last request sleeps at once.
  wire::SpinWait spin;
  spin.set_cap_us(spin_us);
  for (;;) {
    int64_t began = requests.buffered() ? 0 : spin.poll(fd);
    char* in = nullptr;
    long n = requests.next(fd, &in);
    if (began) spin.done(began);
    if (n < 0) break;  // hung up, or a frame over the limit: either way the connection ends
    wire::Fields f;
    Reply r = wire::decode(in, static_cast<size_t>(n), f) ? svc.handle(cl, f) : reply_err(EINVAL);
    if (!send_reply(fd, r, out)) break;
  }
  svc.disconnect(cl);
}

}  // namespace ckptfwd::fwd
