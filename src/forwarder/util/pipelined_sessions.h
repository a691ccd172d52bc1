// The client sessions that may send a request without waiting for its reply (a leased
// OPEN, wire/lease.h), and the wait that keeps every other request after them.
//
// A library's leased open returns to the application as soon as its OPEN is written to
// the socket. Another process of the node may then act on the path at once (a barrier,
// then an open, a stat, an fsync on another connection) and its request may reach its
// own session thread first. Close-to-open order asks that it see the new version: so a
// request, before it is served, waits until every other pipelining session has acted on
// all it was sent before (await_others). A session is "unsettled" from the moment its
// thread is about to consume bytes until it has acted on every pipelined request among
// them; unread bytes on its socket count as unsettled too. Read in that order (the
// socket first, then the flag) nothing sent earlier is missed:
//
//   session thread:  [carry empty] settle -> poll readable -> unsettle -> recv -> act ...
//                    settle again only when the carry is empty and the request it acts
//                    on now is one the client waits for (its sender sent nothing after).
//
// A thread waiting here is always settled itself (it acts on a request its client waits
// for), so two waits never wait for each other.
#pragma once
#include <atomic>
#include <cstddef>
#include <list>
#include <mutex>

namespace ckptfwd::fwd {

class PipelinedSessions {
 public:
  struct Entry {
    int fd = -1;
    std::atomic<bool> unsettled{false};
  };
  // A session that was given a lease: it pipelines from now on. Its fd stays open until
  // leave().
  Entry* join(int fd);
  void leave(Entry* e);
  static void settle(Entry* e) { e->unsettled.store(false); }
  static void unsettle(Entry* e) { e->unsettled.store(true); }
  // Returns true once every session other than self (nullptr: any) has acted on what it
  // was sent before now; false after limit_ms (a session thread stuck that long is
  // logged and not waited for further).
  bool await_others(const Entry* self, int limit_ms = 2000);
  size_t size() const { return count_.load(); }

 private:
  bool settled(const Entry* self);
  std::mutex mu_;
  std::list<Entry> entries_;  // (stable addresses)
  std::atomic<size_t> count_{0};
};

}  // namespace ckptfwd::fwd
