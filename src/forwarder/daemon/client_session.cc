#include "forwarder/daemon/client_session.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "forwarder/daemon/request_reader.h"
#include "forwarder/staging/lease_journal_writer.h"
#include "forwarder/util/log.h"
#include "forwarder/util/test_hooks.h"
#include "wire/spin_wait.h"

namespace ckptfwd::fwd {

namespace {
// Returns once fd has bytes to read, has hung up, or failed.
void await_readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
  }
}

// MSG_NOSIGNAL: a client that died must not kill the forwarder with SIGPIPE.
long send_fn(int fd, const void* p, size_t n) { return ::send(fd, p, n, MSG_NOSIGNAL); }

// Replies to requests the client sent without waiting, with more queued behind them, held
// and written together once the last request queued is answered: one write here, one
// read for the library (wire/read_ahead.h). The client waits for none of them but the
// last, which goes out at once. Kept as replies until then, so that a lease in one can
// be taken back (Service::withdraw_lease) when the journal cannot describe it.
class HeldReplies {
 public:
  static constexpr int kMax = 16;
  bool full() const { return replies_.size() == kMax; }
  // Whether r goes in behind the others (else: larger than what is left of a frame).
  bool fits(const Reply& r) const {
    // (wire::encode wants a byte beyond the payload)
    return r.size() <= wire::kMaxFields && bytes_ + encoded_size(r) + 1 <= buf_.size();
  }
  void add(Reply r) {
    bytes_ += encoded_size(r);
    replies_.push_back(std::move(r));
  }
  std::vector<Reply>& replies() { return replies_; }
  bool flush(int fd) {
    if (replies_.empty()) return true;
    if (test_hooks().at_reply_write) test_hooks().at_reply_write(static_cast<int>(replies_.size()));
    size_t used = 0;
    for (const Reply& r : replies_) {
      const char* fields[wire::kMaxFields];
      size_t n = 0;
      for (const std::string& f : r) fields[n++] = f.c_str();
      size_t len = wire::encode(buf_.data() + used + 4, buf_.size() - used - 4, fields, n);
      for (int i = 0; i < 4; ++i) buf_[used + i] = static_cast<char>((len >> (8 * i)) & 0xff);
      used += 4 + len;
    }
    replies_.clear();
    bytes_ = 0;
    for (size_t off = 0; off < used;) {
      ssize_t w = ::send(fd, buf_.data() + off, used - off, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      off += static_cast<size_t>(w);
    }
    return true;
  }

 private:
  static size_t encoded_size(const Reply& r) {
    size_t n = 4;
    for (const std::string& f : r) n += f.size() + 1;
    return r.empty() ? 4 : n - 1;
  }
  std::vector<Reply> replies_;
  size_t bytes_ = 0;
  std::vector<char> buf_ = std::vector<char>(4 + wire::kMaxFrame);
};

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
}  // namespace

void serve_client(Service& svc, int fd, uint64_t client_id, long peer_pid, int spin_us) {
  ClientCtx cl;
  cl.id = client_id;
  cl.pid = peer_pid;
  cl.release_after_reply = true;
  RequestReader requests;
  HeldReplies held;
  std::vector<char> out(wire::kMaxFrame);
  // A process writing many small files sends its next OPEN a few microseconds after the
  // last reply: this session then polls for it instead of sleeping (a wake-up per
  // request); one that waited longer than spin_us for its last request sleeps at once.
  wire::SpinWait spin;
  spin.set_cap_us(spin_us);
  cl.fd = fd;
  // The journal records this session makes are written before its replies go out, all in
  // one write (lease_journal_writer.h).
  LeaseJournalWriter::defer_on_this_thread(true);
  for (;;) {
    int64_t began = 0;
    if (!requests.buffered()) {
      if (cl.pipelined) PipelinedSessions::settle(cl.pipelined);
      began = spin.poll(fd);
      // A session that pipelines is unsettled before it consumes a byte (pipelined_sessions.h).
      if (cl.pipelined) {
        await_readable(fd);
        PipelinedSessions::unsettle(cl.pipelined);
      }
    }
    char* in = nullptr;
    long n = requests.next(fd, &in);
    if (began) spin.done(began);
    if (n < 0) break;  // hung up, or a frame over the limit: either way the connection ends
    wire::Fields f;
    bool ok = wire::decode(in, static_cast<size_t>(n), f);
    // Its client waits for this reply and sent nothing after it: settled while it is served.
    if (cl.pipelined && !requests.buffered() && !(ok && is_unwaited(f)))
      PipelinedSessions::settle(cl.pipelined);
    Reply r = ok ? svc.handle(cl, f) : reply_err(EINVAL);
    // The journal records the replies rely on are written first. One that cannot be is
    // logged and the replies go out all the same (lease_journal_writer.h), but without
    // the leases they would hand over: a lease is handed out only once it is described.
    auto flush_held = [&](Reply* also) {
      if (!svc.before_replies()) {
        for (Reply& h : held.replies()) svc.withdraw_lease(cl, h);
        if (also) svc.withdraw_lease(cl, *also);
      }
      cl.leases_unsent.clear();
      return held.flush(fd);
    };
    bool sent = true;
    if (!held.fits(r)) {  // larger than what is left of a frame (a LIST): the ones held first
      sent = flush_held(&r) && send_reply(fd, r, out);
    } else {
      held.add(std::move(r));
      if (!requests.has_request() || held.full()) sent = flush_held(nullptr);
    }
    svc.after_reply(cl);
    if (!sent) break;
  }
  svc.disconnect(cl);
  svc.before_replies();
  LeaseJournalWriter::defer_on_this_thread(false);
}

}  // namespace ckptfwd::fwd
