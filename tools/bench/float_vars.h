// The float variables of a data set's files as make bench-ratio's library anchors and its
// lossy comparison see them (tools/bench/bench_anchors.cc, bench_lossy.cc): found by
// ckptfwd's own structure inference (schema::Inferrer, as the forwarder runs it; the
// schema is for raw files), each F32/F64 variable (either byte order) merged across the
// files, its pieces concatenated in rank order as a variable-aware merge sees them
// (merged_dims gives the shape); every other byte kept apart, file after file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bench {

using Bytes = std::vector<uint8_t>;

// One float variable merged across the files.
struct Merged {
  std::string key;
  bool is_double = false, big_endian = false;
  std::vector<std::vector<uint64_t>> shapes;  // per piece-carrying file, ones dropped
  Bytes raw;                                  // as in the files
  std::vector<size_t> dims;                   // slowest first (at most 3); product = elements
};

struct Inputs {
  uint64_t total = 0;  // bytes of all files
  std::vector<Merged> vars;
  Bytes other;  // every byte no float variable covers, file after file
};

// Reads the files (rank order) and fills in; false with a message on stderr (the tool's
// name first) when the schema or a file cannot be read.
bool load_float_vars(const char* tool, const std::vector<std::string>& files,
                     const std::string& schema, Inputs& in);

// Reverses the bytes of each width-byte element of p[0, n).
void byteswap(uint8_t* p, size_t n, size_t width);

}  // namespace bench
