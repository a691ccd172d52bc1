// Text output of variable maps, shared by `ckptfwd inspect`, `ckptfwd schema check` and
// `ckptfwd ls --vars`.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "store/container/variable_map.h"

namespace ckptfwd::cli {

// "4x8x16" ("scalar" for rank 0).
std::string fmt_shape(const std::vector<uint64_t>& shape);

// "source: hdf5 (superblock at 0)" or "source: none, stored agnostic (why)", a table of
// the variables (name, key, dtype, shape, the first extent offsets, bytes) and a line with
// the bytes in variables and the residual ranges.
void print_variable_map(FILE* out, const VariableMap& m, uint64_t file_size);

}  // namespace ckptfwd::cli
