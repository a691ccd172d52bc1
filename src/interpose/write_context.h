// The element type of the bytes being written right now, set by a caller higher up (the
// MPI layer) around a write through a typed file view: every write of a tracked fd made
// meanwhile on this thread records a dtype hint (hint_log.h). 0 (kBytes): untyped, nothing
// is recorded, and the write path pays one TLS load.
#pragma once
#include <cstdint>

namespace ckptfwd::interpose {

extern __thread uint8_t t_write_dtype __attribute__((tls_model("initial-exec")));

class ScopedWriteDtype {
 public:
  explicit ScopedWriteDtype(uint8_t code) : prev_(t_write_dtype) { t_write_dtype = code; }
  ~ScopedWriteDtype() { t_write_dtype = prev_; }
  ScopedWriteDtype(const ScopedWriteDtype&) = delete;
  ScopedWriteDtype& operator=(const ScopedWriteDtype&) = delete;

 private:
  uint8_t prev_;
};

}  // namespace ckptfwd::interpose
