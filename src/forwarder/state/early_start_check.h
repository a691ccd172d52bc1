// Whether a forwarder started early serves the settings its clients run with.
//
// A library starts the node's forwarder at its own start (interpose/client/client.h), with
// the settings of its process, which need not be the application's: in `env
// CKPTFWD_STORE=/x app` the library runs in `env` first, whose environment lacks what
// `app` gets. Such a forwarder is tentative until a client says which settings it has
// (HELLO's "env=", wire/settings_digest.h): the first client with the same settings makes
// it the job's, one with other settings makes it retire (the client starts a forwarder of
// its own, wire/protocol.h RETIRE). Only the first decides: once a client is served, a
// later one with other settings is served too, as any forwarder serves whoever connects
// (a job's processes normally share one environment). A forwarder started by a captured
// open is never tentative: its first client is the process that started it.
#pragma once
#include <cstdint>
#include <functional>
#include <mutex>

namespace ckptfwd::fwd {

class EarlyStartCheck {
 public:
  enum class Verdict { kServe, kRetire };
  // This forwarder was started early, with settings `own`: tentative from now on.
  // retire: called once, by the HELLO that makes it retire (it asks the daemon to stop).
  void arm(uint64_t own, std::function<void()> retire = {});
  // A HELLO. has_digest false (a probe of `--daemon`, the CLI, an older library): served,
  // decides nothing. Thread-safe: the sessions' threads call it concurrently.
  Verdict hello(bool has_digest, uint64_t digest);
  // True once a HELLO made this forwarder retire.
  bool retiring();

 private:
  enum class State { kOff, kTentative, kSettled, kRetiring };
  std::mutex mu_;
  State state_ = State::kOff;
  uint64_t own_ = 0;
  std::function<void()> retire_;
};

}  // namespace ckptfwd::fwd
