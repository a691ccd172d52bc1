#include "schema/lammps_restart.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace ckptfwd::schema {
namespace {

constexpr char kClosing[] = "LammpS RestartT";  // with its NUL: 16 bytes
constexpr uint64_t kClosingBytes = sizeof(kClosing);
constexpr uint64_t kBlockHead = 8;  // i32 flag, i32 count of float64 values
// More blocks than any job writes into one file (one per rank); a hostile file past it is
// stored agnostic.
constexpr uint64_t kMaxBlocks = uint64_t{1} << 20;

int32_t i32_at(const uint8_t* p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}

double f64_at(const uint8_t* p) {
  double v;
  memcpy(&v, p, 8);
  return v;
}

struct Block {
  uint64_t off = 0;     // offset of its first value (after the flag and count)
  uint64_t values = 0;  // float64 values
  uint64_t record = 0;  // the length of every record, 0 when they differ
};

// The MPI-IO layout's header sections are written by rank 0 and end with the flag -1,
// within the file's first bytes (kMaxMpiioHeader: type arrays and force fields of a few
// thousand types), and every rank's records follow it up to the end of the file.
constexpr uint64_t kMaxMpiioHeader = uint64_t{1} << 20;

// Bounded work over hostile input: every record and block looked at costs one step.
class Budget {
 public:
  explicit Budget(uint64_t steps) : left_(steps) {}
  bool spend() {
    if (left_ == 0) return false;
    --left_;
    return true;
  }
  bool spent() const { return left_ == 0; }

 private:
  uint64_t left_;
};

// The records of the values at p: true when they tile them exactly; *record the common
// length or 0.
bool records_fit(const uint8_t* p, uint64_t values, Budget& budget, uint64_t* record) {
  uint64_t at = 0, common = 0;
  bool same = true;
  while (at < values) {
    if (!budget.spend()) return false;
    const double len = f64_at(p + at * 8);
    // At least the length and x y z; an integer no longer than what is left.
    if (!(len >= 4 && len <= static_cast<double>(values - at)) || std::floor(len) != len)
      return false;
    const uint64_t l = static_cast<uint64_t>(len);
    if (common == 0) common = l;
    same = same && l == common;
    at += l;
  }
  *record = same ? common : 0;
  return values > 0 && at == values;
}

// The blocks from offset `at` to the closing string, all with the flag at `at`.
bool blocks_from(const uint8_t* d, uint64_t at, uint64_t end, Budget& budget,
                 std::vector<Block>& out) {
  out.clear();
  const int32_t flag = i32_at(d + at);
  while (at < end) {
    if (!budget.spend() || out.size() >= kMaxBlocks || end - at < kBlockHead) return false;
    if (i32_at(d + at) != flag) return false;
    const int32_t n = i32_at(d + at + 4);
    if (n <= 0 || static_cast<uint64_t>(n) > (end - at - kBlockHead) / 8) return false;
    Block b{at + kBlockHead, static_cast<uint64_t>(n), 0};
    if (!records_fit(d + at + kBlockHead, b.values, budget, &b.record)) return false;
    out.push_back(b);
    at += kBlockHead + b.values * 8;
  }
  return at == end && !out.empty();
}

}  // namespace

// The MPI-IO layout (write_restart FILE.mpiio, one file written by every rank at once):
// the header sections, then every rank's records back to back up to the end of the file,
// no blocks and no closing string. The records start right after an i32 flag -1 (the end
// of the sections; before it, the ranks' counts of values), at the first such place from
// which they tile the rest of the file exactly.
bool mpiio_records(const uint8_t* d, uint64_t size, Budget& budget, Block* out) {
  const uint64_t last = std::min(size, kMaxMpiioHeader);
  for (uint64_t p = kClosingBytes; p + 4 + 8 <= last; ++p) {
    if (i32_at(d + p) != -1) continue;
    const uint64_t at = p + 4;
    if ((size - at) % 8) continue;
    Block b{at, (size - at) / 8, 0};
    if (records_fit(d + at, b.values, budget, &b.record)) {
      *out = b;
      return true;
    }
    if (budget.spent()) return false;
  }
  return false;
}

bool is_lammps_restart(const uint8_t* data, uint64_t size) {
  if (!data || size < kClosingBytes) return false;
  // A restart ends with the string; one in the MPI-IO layout only opens with it.
  return memcmp(data + size - kClosingBytes, kClosing, kClosingBytes) == 0 ||
         memcmp(data, kClosing, kClosingBytes) == 0;
}

bool infer_lammps_restart(const uint8_t* data, uint64_t size, VariableMap& out, std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (!is_lammps_restart(data, size)) return fail("no \"LammpS RestartT\" at the end or the start");
  // A real file's blocks start within its first bytes (after a header) and the first
  // candidate usually fits; the budget keeps a hostile file's search linear in its size.
  Budget budget(4 * (size / 8) + 4096);
  std::vector<Block> blocks;
  bool found = false, mpiio = false;
  if (memcmp(data + size - kClosingBytes, kClosing, kClosingBytes) != 0) {
    Block b;
    if (!mpiio_records(data, size, budget, &b))
      return fail(budget.spent() ? "no per-atom records found within the search budget"
                                 : "opens like a LAMMPS restart but no records run from the "
                                   "end of its header sections (in its first MiB) to the end "
                                   "of the file");
    blocks.push_back(b);
    found = mpiio = true;
  }
  const uint64_t end = size - kClosingBytes;
  for (uint64_t at = 0; !found && at + kBlockHead + 8 <= end; ++at) {
    const int32_t n = i32_at(data + at + 4);
    if (n <= 0 || static_cast<uint64_t>(n) > (end - at - kBlockHead) / 8) continue;
    // The first record's length must be an integer no longer than the block: a cheap
    // test before following the run.
    const double first = f64_at(data + at + kBlockHead);
    if (!(first >= 4 && first <= n) || std::floor(first) != first) continue;
    found = blocks_from(data, at, end, budget, blocks);
    if (budget.spent()) break;
  }
  if (!found && !budget.spent() && size >= 2 * kClosingBytes + 4 &&
      memcmp(data, kClosing, kClosingBytes) == 0 && i32_at(data + end - 4) == -1) {
    // The header file of a multi-file restart (its sections end with the flag -1 right
    // before the closing string, where a single file has its last block): nothing to
    // map, and nothing wrong.
    VariableMap m;
    m.source = "lammps";
    m.detail = "LAMMPS restart header, no per-atom data";
    out = std::move(m);
    return true;
  }
  if (!found)
    return fail(budget.spent() ? "no per-atom blocks found within the search budget"
                               : "no run of per-atom blocks ends at the closing string");

  uint64_t record = blocks.front().record;
  for (const Block& b : blocks)
    if (b.record != record) record = 0;
  Variable v;
  v.name = "lammps/atoms";
  v.dtype = "F64LE";
  v.elem_size = 8;
  uint64_t rows = 0;
  for (const Block& b : blocks) {
    VarExtent e;
    e.file_off = b.off;
    e.len = b.values * 8;
    if (record) {
      e.start = {rows, 0};
      e.shape = {b.values / record, record};
      rows += b.values / record;
    } else {
      e.start = {rows};
      e.shape = {b.values};
      rows += b.values;
    }
    v.extents.push_back(std::move(e));
  }
  v.shape = record ? std::vector<uint64_t>{rows, record} : std::vector<uint64_t>{rows};
  v.key = var_key(v.name, v.dtype, v.shape.size());
  VariableMap m;
  m.source = "lammps";
  m.detail = "LAMMPS restart, " +
             (mpiio ? std::string("MPI-IO layout")
                    : std::to_string(blocks.size()) + " per-processor block" +
                          (blocks.size() == 1 ? "" : "s")) +
             ", " +
             (record ? std::to_string(rows) + " atoms of " + std::to_string(record) + " values"
                     : std::to_string(rows) + " values in records of several lengths");
  m.vars.push_back(std::move(v));
  std::string bad = check_variable_map(m, size);
  if (!bad.empty()) return fail(bad);
  out = std::move(m);
  return true;
}

}  // namespace ckptfwd::schema
