// The byte ranges one process wrote into a version of a file shared across nodes (only
// such versions pay for this). A sorted array of disjoint, non-adjacent [begin, end)
// intervals in malloc'd memory (the library carries no C++ runtime). Not thread-safe:
// ExtentLog (extent_log.h) locks around it.
//
// Checkpoint writes are mostly in increasing offset order, so an insert is usually an
// append or a merge with the last interval: O(log n) search, no memmove.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ckptfwd::interpose {

struct ExtentSet {
  uint64_t (*iv)[2] = nullptr;  // iv[i][0] begin, iv[i][1] end; sorted, disjoint, gaps > 0
  size_t n = 0;
  size_t cap = 0;
};

// Adds [begin, end) (end > begin), merging with overlapping or adjacent intervals.
// False if memory ran out (the set is unchanged then).
bool extent_set_add(ExtentSet& s, uint64_t begin, uint64_t end);
void extent_set_clear(ExtentSet& s);  // keeps the memory
void extent_set_free(ExtentSet& s);

}  // namespace ckptfwd::interpose
