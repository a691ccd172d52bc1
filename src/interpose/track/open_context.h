// Context that a caller higher up (the MPI layer) attaches to the opens made on its behalf.
// MPI_File_open of a file whose communicator spans several nodes sets shared_across_nodes
// around the real call, so every open ROMIO makes inside it asks the forwarder for a
// partial version: only the bytes this node writes are committed, as an overlay.
#pragma once

namespace ckptfwd::interpose {

struct OpenContext {
  bool shared_across_nodes = false;
};

extern __thread OpenContext t_open_context __attribute__((tls_model("initial-exec")));

class ScopedOpenContext {
 public:
  explicit ScopedOpenContext(const OpenContext& c) : prev_(t_open_context) { t_open_context = c; }
  ~ScopedOpenContext() { t_open_context = prev_; }
  ScopedOpenContext(const ScopedOpenContext&) = delete;
  ScopedOpenContext& operator=(const ScopedOpenContext&) = delete;

 private:
  OpenContext prev_;
};

}  // namespace ckptfwd::interpose
