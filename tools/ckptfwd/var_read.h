// Reading one variable's blocks into the array `ckptfwd export` makes: the files' blocks
// in parallel (a thread per block, at most as many as the cores), each extent in slabs of
// whole rows of at most kSlabBytes, so the memory beside the array is bounded by threads x
// slab whatever the variable's size. Every chunk is checked (read_extent) and the decoded
// bytes and lossy records summed as the sequential read sums them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint_vars.h"
#include "var_assembly.h"

namespace ckptfwd::cli {

inline constexpr uint64_t kSlabBytes = 8ull << 20;

struct BlockReads {
  uint64_t decoded = 0;
  codec::LossyRecord lossy;
  bool any_lossy = false;
};

// Reads every extent of held[i]'s variable into dst, the row-major array of plan.shape
// (elem bytes per element), block i's element 0 at plan.at[i]. threads 0: the cores.
// False with *err naming the first extent that failed (the others may be partly read).
// slab: the bytes read at once (tests make it small).
bool read_blocks(const std::vector<HeldVar>& held, const Assembly& plan, uint32_t elem,
                 uint8_t* dst, BlockReads* out, std::string* err, unsigned threads = 0,
                 uint64_t slab = kSlabBytes);

}  // namespace ckptfwd::cli
