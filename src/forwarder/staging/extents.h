// Byte extents of a partial version (a file shared across nodes, see protocol.h OPEN
// "shared"): which bytes this node's processes wrote, so only those are committed (as an
// overlay). Extents files written by the library (and by the forwarder itself for
// snapshots and inherited extents) are little-endian u64 pairs [begin, end), in one or
// more sorted runs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "wire/protocol.h"

namespace ckptfwd::fwd {

struct Extent {
  uint64_t begin = 0, end = 0;  // [begin, end), end > begin
  bool operator==(const Extent&) const = default;
};
// Sorted, disjoint, non-adjacent.
using Extents = std::vector<Extent>;

// Ends beyond this are refused; parse_whole_end reads a CLOSE's "whole=<end>" and a .meta's
// "whole" line (both in wire/protocol.h).
using wire::kMaxExtentEnd;
using wire::parse_whole_end;

// a := a ∪ b (both normalised).
void extents_union(Extents& a, const Extents& b);
// Sorts and merges arbitrary intervals into the normalised form.
void extents_normalize(Extents& e);
// Cut to [0, size).
Extents extents_clip(const Extents& e, uint64_t size);

// Reads an extents file: every pair must have begin < end <= kMaxExtentEnd and the file
// a whole number of pairs (runs may follow each other in any order; they are merged).
// False with *err naming the file and the problem.
bool read_extents_file(const std::string& path, Extents& out, std::string* err);
// Writes e (0600, O_EXCL) to path. False with *err.
bool write_extents_file(const std::string& path, const Extents& e, std::string* err);
// The data regions of a file (SEEK_DATA/SEEK_HOLE; the whole file where holes are not
// reported). Page granular on tmpfs: a superset of the bytes written.
bool data_extents_of(const std::string& path, Extents& out, std::string* err);

// "v<vid>.ext.<pid>.<seq>": an extents file of version vid in a session dir.
bool is_extents_file_name(const std::string& name, uint64_t vid);
std::string extents_file_name(uint64_t vid, long pid, uint64_t seq);

}  // namespace ckptfwd::fwd
