// How the blocks of one variable, one per file of a checkpoint, make one array for
// `ckptfwd export`: the global array when their placements (Variable::global_shape and
// global_start) tile it exactly, the variable itself when one file holds it whole (a file
// every rank wrote its part of), else the blocks stacked along a new first dimension, in
// the order given, with the reason they were not assembled.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ckptfwd::cli {

struct VarBlock {
  std::vector<uint64_t> shape;                       // the file's variable
  std::vector<uint64_t> global_shape, global_start;  // its placement (empty: none)
};

struct Assembly {
  bool assembled = false;       // one array of the variable (global, or one file's whole)
  std::string how;              // how assembled, or why only stacked
  std::vector<uint64_t> shape;  // the array made
  // Per block: the coordinates in `shape` of its element 0 (stacked: [i, 0, ...]).
  std::vector<std::vector<uint64_t>> at;
};

// The plan for blocks (at least one). "" or why no array can be made at all: the blocks
// are not placed and differ in shape, or the array's size overflows 64 bits.
std::string plan_assembly(const std::vector<VarBlock>& blocks, Assembly& out);

// Elements of a shape (1 for a scalar); false when the count overflows 64 bits.
bool element_count(const std::vector<uint64_t>& shape, uint64_t* n);

// Copies a block of block_shape elements, row-major in src, into the row-major array of
// array_shape at dst, its element 0 at coordinates at. elem: bytes per element. The
// block must lie inside the array (the caller's plan says so).
void copy_block(const uint8_t* src, const std::vector<uint64_t>& block_shape,
                const std::vector<uint64_t>& at, const std::vector<uint64_t>& array_shape,
                uint32_t elem, uint8_t* dst);

}  // namespace ckptfwd::cli
