#include "var_assembly.h"

#include <cstring>

#include "vars_format.h"

namespace ckptfwd::cli {

namespace {

bool overlap(const VarBlock& a, const VarBlock& b) {
  for (size_t d = 0; d < a.shape.size(); ++d) {
    const uint64_t a0 = a.global_start[d], a1 = a0 + a.shape[d];
    const uint64_t b0 = b.global_start[d], b1 = b0 + b.shape[d];
    if (a1 <= b0 || b1 <= a0) return false;
  }
  return true;
}

// Why blocks do not tile their global array exactly, or "". Each block lies inside it
// (bad_placement, checked when the container was read); no two overlap and their
// volumes add up to the array's, so together they cover every element once.
std::string why_not_tiled(const std::vector<VarBlock>& blocks) {
  size_t placed = 0;
  for (const VarBlock& b : blocks) placed += b.global_shape.empty() ? 0 : 1;
  if (placed == 0) return "no file has a placement in a global array";
  if (placed != blocks.size())
    return std::to_string(blocks.size() - placed) + " of the " + std::to_string(blocks.size()) +
           " files have no placement";
  const std::vector<uint64_t>& g = blocks[0].global_shape;
  for (const VarBlock& b : blocks)
    if (b.global_shape != g)
      return "the files disagree on the global shape (" + fmt_shape(g) + ", " +
             fmt_shape(b.global_shape) + ")";
  uint64_t want = 0, sum = 0;
  if (!element_count(g, &want)) return "the global shape " + fmt_shape(g) + " overflows";
  for (size_t i = 0; i < blocks.size(); ++i) {
    uint64_t n = 0;
    element_count(blocks[i].shape, &n);  // inside g: cannot overflow
    for (size_t j = 0; j < i; ++j)
      if (overlap(blocks[i], blocks[j]))
        return "the blocks of files " + std::to_string(j) + " and " + std::to_string(i) +
               " overlap";
    sum += n;  // at most blocks.size() * want, checked against want below
    if (sum > want) break;
  }
  if (sum != want)
    return "the blocks hold " + std::to_string(sum) + " of the global array's " +
           std::to_string(want) + " elements (holes)";
  return "";
}

}  // namespace

bool element_count(const std::vector<uint64_t>& shape, uint64_t* n) {
  *n = 1;
  for (uint64_t d : shape)
    if (__builtin_mul_overflow(*n, d, n)) return false;
  return true;
}

std::string plan_assembly(const std::vector<VarBlock>& blocks, Assembly& out) {
  out = Assembly{};
  const std::string why = why_not_tiled(blocks);
  if (why.empty()) {
    out.assembled = true;
    out.shape = blocks[0].global_shape;
    out.how =
        "the " + std::to_string(blocks.size()) + " files' blocks tile " + fmt_shape(out.shape);
    for (const VarBlock& b : blocks) out.at.push_back(b.global_start);
    return "";
  }
  if (blocks.size() == 1 && blocks[0].global_shape.empty()) {
    out.assembled = true;
    out.shape = blocks[0].shape;
    out.how = "one file holds the whole variable";
    out.at.push_back(std::vector<uint64_t>(out.shape.size(), 0));
    return "";
  }
  for (const VarBlock& b : blocks)
    if (b.shape != blocks[0].shape)
      return why + ", and their blocks differ in shape (" + fmt_shape(blocks[0].shape) + ", " +
             fmt_shape(b.shape) + "), so they cannot be stacked either";
  out.how = why;
  out.shape = blocks[0].shape;
  out.shape.insert(out.shape.begin(), blocks.size());
  uint64_t n = 0;
  if (!element_count(out.shape, &n)) return why + ", and the stacked shape overflows";
  for (size_t i = 0; i < blocks.size(); ++i) {
    std::vector<uint64_t> at(out.shape.size(), 0);
    at[0] = i;
    out.at.push_back(std::move(at));
  }
  return "";
}

void copy_block(const uint8_t* src, const std::vector<uint64_t>& block_shape,
                const std::vector<uint64_t>& at, const std::vector<uint64_t>& array_shape,
                uint32_t elem, uint8_t* dst) {
  const size_t rank = array_shape.size();
  // The block may have fewer dimensions than the array (a stacked block: leading 1s).
  std::vector<uint64_t> b(rank - block_shape.size(), 1);
  b.insert(b.end(), block_shape.begin(), block_shape.end());
  uint64_t rows = 1, n = 0;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= b[d];
  if (!element_count(b, &n) || n == 0) return;
  if (rank == 0) {
    memcpy(dst, src, elem);
    return;
  }
  const uint64_t row_bytes = b[rank - 1] * elem;
  std::vector<uint64_t> idx(rank, 0);  // the row's coordinates in the block
  for (uint64_t r = 0; r < rows; ++r) {
    uint64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off = off * array_shape[d] + at[d] + idx[d];
    memcpy(dst + off * elem, src + r * row_bytes, row_bytes);
    for (size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < b[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace ckptfwd::cli
