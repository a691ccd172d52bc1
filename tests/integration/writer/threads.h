// Several threads of one process writing captured files at the same time, as OpenMP or
// I/O-thread checkpoint writers do: the library's fd table and client connection must be
// thread safe.
#pragma once
#include <string>

namespace ckpt_writer {

// Thread i writes thr_<i>.bin (write + pwrite) and thr_<i>.dat (stdio) in dir. Exits 1 on
// any failed call.
void write_threaded(const std::string& dir, int threads);

}  // namespace ckpt_writer
