// numpy's basic slicing of a C-order array, for `ckptfwd dump --slice` and `ckptfwd export
// --slice`: "START:STOP[:STEP]" per dimension, comma separated, optionally inside [ ],
// each part optional as in numpy (":" the whole dimension, "::-1" reversed), negative
// positions counting from the end; a single integer picks one index and drops that
// dimension; dimensions not named are taken whole. Positions are clipped to the
// dimension as numpy clips them, so the result is numpy's a[SLICE], element for element.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ckptfwd::cli {

struct SliceDim {
  bool index = false;  // a single integer: the dimension is dropped
  bool has_start = false, has_stop = false;
  int64_t start = 0, stop = 0, step = 1;
};

struct ArraySlice {
  std::string text;  // as the user wrote it
  std::vector<SliceDim> dims;
};

// Parses text into out; "" or why it is not a slice.
std::string parse_slice(const std::string& text, ArraySlice& out);

// The slice applied to an array of shape: the result's shape (dropped dimensions left
// out) and, in the result's C order, each element's offset (in elements) in the array.
// "" or why the slice does not fit the shape (more dimensions than it has, an index
// out of range).
std::string resolve_slice(const ArraySlice& s, const std::vector<uint64_t>& shape,
                          std::vector<uint64_t>& out_shape, std::vector<uint64_t>& offsets);

}  // namespace ckptfwd::cli
