// The ways real checkpoint writers put bytes into files. Each pattern writes one file per
// rank, named "<stem>_r<rank>.<ext>"; together they cover every write path the preload
// library must capture (docs/user-guide.md, "Using it in a job").
#pragma once
#include <cstdio>
#include <string>
#include <vector>

namespace ckpt_writer {

// Final file names (after any rename) that write_all() leaves in dir for this rank.
std::vector<std::string> file_names(int rank);
// Writes every pattern's file for this rank into dir. Exits 1 on any failed call.
// fsync_before_rename: the rotation pattern fsyncs its temporary before renaming it, as
// careful applications do (off for tests that need nothing committed yet).
void write_all(const std::string& dir, int rank, bool fsync_before_rename = true);
// One file of `bytes` bytes written in 64 KiB write() calls (for the staging-limit test).
void write_big(const std::string& path, int rank, size_t bytes);
// Same bytes, but the file is left open: returns its descriptor.
int write_big_open(const std::string& path, int rank, size_t bytes);
// The same bytes as write_big, written with fopen/fwrite in fwrite() calls of chunk bytes
// (0: 64 KiB): glibc flushes them with its internal write, which the preload library
// cannot see. The _open variant leaves the stream open and returns it.
void write_big_stdio(const std::string& path, int rank, size_t bytes, size_t chunk = 0);
FILE* write_big_stdio_open(const std::string& path, int rank, size_t bytes, size_t chunk = 0);

}  // namespace ckpt_writer
