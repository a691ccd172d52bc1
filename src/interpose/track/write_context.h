// The element type of the bytes being written right now, set by a caller higher up (the
// MPI layer) around a write through a typed file view: every write of a tracked fd made
// meanwhile on this thread records a dtype hint (hint_log.h). 0 (kBytes): untyped, nothing
// is recorded, and the write path pays one TLS load.
#pragma once
#include <cstdint>

#include "base/view_shape.h"

namespace ckptfwd::interpose {

extern __thread uint8_t t_write_dtype __attribute__((tls_model("initial-exec")));
// The global array of the view the bytes go through (base/view_shape.h), or nullptr: a
// view whose filetype is not a subarray or darray of its etype.
extern __thread const ViewShape* t_write_view __attribute__((tls_model("initial-exec")));

class ScopedWriteDtype {
 public:
  explicit ScopedWriteDtype(uint8_t code, const ViewShape* view = nullptr)
      : prev_(t_write_dtype), prev_view_(t_write_view) {
    t_write_dtype = code;
    t_write_view = code ? view : nullptr;
  }
  ~ScopedWriteDtype() {
    t_write_dtype = prev_;
    t_write_view = prev_view_;
  }
  ScopedWriteDtype(const ScopedWriteDtype&) = delete;
  ScopedWriteDtype& operator=(const ScopedWriteDtype&) = delete;

 private:
  uint8_t prev_;
  const ViewShape* prev_view_;
};

// Set around MPI_File_preallocate: ROMIO preallocates by writing (zeros past the end, the
// old bytes back below it). Those writes are not data of this node: recorded as extents of
// a file shared across nodes they would, as an overlay, overwrite other nodes' bytes with
// this node's zeros. Writes made meanwhile record neither extents nor hints; the staged
// size still grows, which is all preallocate means.
extern __thread bool t_fill_only __attribute__((tls_model("initial-exec")));

class ScopedFillOnly {
 public:
  ScopedFillOnly() : prev_(t_fill_only) { t_fill_only = true; }
  ~ScopedFillOnly() { t_fill_only = prev_; }
  ScopedFillOnly(const ScopedFillOnly&) = delete;
  ScopedFillOnly& operator=(const ScopedFillOnly&) = delete;

 private:
  bool prev_;
};

}  // namespace ckptfwd::interpose
