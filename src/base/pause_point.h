// Pause points of long computations. A computation that may run beside the application
// (the forwarder's bulk compression of closed files: a chunk's codec steps, a whole file's
// hash) calls pause_point() between pieces of about a megabyte, never while it holds a
// lock another thread could wait for. A thread that runs such work under a PauseScope runs
// the scope's handler there, which may block for a while (the forwarder's worker pool waits
// while the application writes: forwarder/util/yield_gate.h); elsewhere a pause point
// costs one thread-local load.
//
// Why inside a task and not only between tasks: on a busy core a chunk's encoding lasts
// about as long as the application's write of a large file, so work already started when
// the write begins would otherwise run on beside most of it (docs/internals.md, "The application's
// writes go first").
#pragma once

namespace ckptfwd {

using PauseHandler = void (*)(void* arg);

namespace pause_detail {
struct Handler {
  PauseHandler fn = nullptr;
  void* arg = nullptr;
};
inline thread_local Handler current;
}  // namespace pause_detail

// Runs this thread's handler, if any.
inline void pause_point() {
  const pause_detail::Handler& h = pause_detail::current;
  if (h.fn) h.fn(h.arg);
}

// Installs fn(arg) as this thread's handler for the scope's life (null: none); the one
// before comes back at its end.
class PauseScope {
 public:
  PauseScope(PauseHandler fn, void* arg) : saved_(pause_detail::current) {
    pause_detail::current = {fn, arg};
  }
  ~PauseScope() { pause_detail::current = saved_; }
  PauseScope(const PauseScope&) = delete;
  PauseScope& operator=(const PauseScope&) = delete;

 private:
  pause_detail::Handler saved_;
};

}  // namespace ckptfwd
