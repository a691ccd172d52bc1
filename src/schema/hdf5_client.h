// HDF5 inference without linking HDF5: the forwarder and the CLI run the helper program
// ckptfwd-h5infer (src/schema/h5infer/h5infer_main.cc, which links the HDF5 library) on the file,
// with a time limit and memory and core-dump limits, and read its variable map (binary
// encoding of store/container/variable_map.h) from a pipe. A helper that crashes, hangs, exits
// non-zero or writes a map that fails the checks costs only this file's inference.
#pragma once
#include <cstdint>
#include <string>

#include "store/container/variable_map.h"

namespace ckptfwd::schema {

// Offset of the HDF5 superblock signature (0, 512, 1024, 2048, ... below size), or -1.
int64_t hdf5_superblock_offset(const uint8_t* data, uint64_t size);

// ckptfwd-h5infer: <dir>/../libexec/ckptfwd/ when installed, else <dir>/ (the build tree),
// <dir> the running executable's (/proc/self/exe).
std::string default_hdf5_helper();
// The helper program NAME: <prefix>/libexec/ckptfwd/NAME of an installed ckptfwd, else
// NAME beside the running executable (a build tree).
std::string default_helper(const std::string& name);

// Runs helper on file (size bytes) and fills out. False with *why on any failure: helper
// missing, killed by a signal, timed out after timeout_ms, bad output.
bool infer_hdf5(const std::string& helper, const std::string& file, uint64_t size, int timeout_ms,
                VariableMap& out, std::string* why);

}  // namespace ckptfwd::schema
