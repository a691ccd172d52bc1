// The bytes of a kChain chunk and of Chain::spec (typed.h). A chain is a list of steps
// applied in order to a stream of m elements, then an entropy stage; decoding inverts the
// steps in reverse order.
//
// Chain::spec:  u8 version | u8 step count | per step: u8 kind, u8 param | u8 entropy | i8 level
// kChain chunk: "CKCH" | u8 version | u8 dtype kind | u32 elem size | u8 big endian |
//               u8 inner count | u64 inner[] | u64 raw size | u8 step count |
//               per step: u8 kind, u8 param, and for fixed/dict/quant/records also u8
//               width, u64 count (exceptions, dictionary entries or whole records), and
//               for quant f64 scale, f64 achieved max error, for records u64 head (the
//               elements before the first record) | u8 entropy | i8 level | body
// The body is the entropy-coded concatenation of: the main stream (m elements of the last
// step's width), each step's side data in step order (exceptions, dictionary), and the
// raw_size % elem_size tail bytes verbatim. Every length of it follows from the header, so
// the decoder never trusts a stored length (fpzip's body is the exception: see
// entropy_fpzip.cc).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.h"

namespace ckptfwd::codec::chain {

inline constexpr uint8_t kSpecVersion = 1;
inline constexpr uint8_t kChunkVersion = 1;
inline constexpr size_t kMaxSteps = 12;
inline constexpr size_t kMaxInner = 8;
inline constexpr uint32_t kMaxElemSize = 1u << 16;
inline constexpr uint64_t kMaxDictEntries = 1u << 16;

// The u8 "dtype kind" of the chunk header.
using ckptfwd::DtypeKind;

struct Dtype {
  DtypeKind kind = DtypeKind::kBytes;
  uint32_t elem = 1;  // bytes per element
  bool big_endian = false;
};
// The dtype of a name of base/dtype.h whose element size the header can hold: a sized name
// (STR<n>, CMP<n>, B<n>) with at most 6 digits and n <= kMaxElemSize. "bytes" (elem 1)
// for any other name.
Dtype parse_dtype(const std::string& name);

enum class Step : uint8_t {
  kSwap = 1,        // byte order to native (little-endian hosts only)
  kFixed = 2,       // param e: floats as integers rint(v*10^e), exceptions verbatim
  kDict = 3,        // distinct values as indices into a sorted table
  kQuant = 4,       // lossy; param 0: step 2*abs, 1: log2 steps for a relative bound
  kDelta = 5,       // previous value (param 1: zigzag the residual)
  kXor = 6,         // previous value, XOR
  kPrevRow = 7,     // value one row back (param 1: zigzag)
  kLorenzo = 8,     // 2-D Lorenzo a + b - c (param 1: zigzag)
  kShuffle = 9,     // bytes grouped by their position in the element
  kByteDelta = 10,  // each byte minus the previous byte
  kColumns = 11,    // records (rows of the innermost dimension) stored field by field
  kLorenzo3 = 12,   // 3-D Lorenzo over the two innermost dimensions (param 1: zigzag)
  kRecords = 13,    // records of several lengths, each led by its length, field by field
  kWavelet = 14     // integer CDF 5/3 lifting along the rows (innermost dimension) and
                    // the columns of the chunk's rows, param levels (1..kMaxWaveletLevels),
                    // zigzagged
};
inline constexpr uint8_t kMaxWaveletLevels = 8;
enum class Entropy : uint8_t { kNone = 0, kZstd = 1, kZlib = 2, kFpzip = 3 };

// The element widths the predictors and fixed-point have an integer type for.
inline bool is_int_width(uint32_t w) { return w == 1 || w == 2 || w == 4 || w == 8; }
// The steps that replace each value by its residual from a prediction (transforms.h).
inline bool is_predictor(Step s) {
  return s == Step::kDelta || s == Step::kXor || s == Step::kPrevRow || s == Step::kLorenzo ||
         s == Step::kLorenzo3;
}

struct StepSpec {
  Step kind;
  uint8_t param = 0;
};

struct Plan {
  std::vector<StepSpec> steps;
  Entropy entropy = Entropy::kZstd;
  int8_t level = 3;
};

// What one chunk recorded about a step beyond its spec.
struct StepRecord {
  StepSpec spec;
  uint8_t width = 0;   // element width after the step (fixed, dict, quant)
  uint64_t count = 0;  // exceptions (fixed, quant), dictionary entries (dict), records
  uint64_t head = 0;   // records: elements before the first record
  double scale = 0;    // quant: the quantization step
  double max_err = 0;  // quant: the largest error of the chunk (relative in log mode)
};

struct ChunkHeader {
  Dtype dtype;
  std::vector<uint64_t> inner;
  uint64_t raw_size = 0;
  std::vector<StepRecord> steps;
  Entropy entropy = Entropy::kNone;
  int8_t level = 0;
};

std::vector<uint8_t> serialize_plan(const Plan& plan);
bool parse_plan(const std::vector<uint8_t>& spec, Plan& plan);
std::string plan_name(const Plan& plan);

void write_header(const ChunkHeader& h, std::vector<uint8_t>& out);
// Parses and validates the header (known kinds, bounded counts); *body_offset is where the
// body starts. False on anything malformed.
bool parse_header(const uint8_t* p, size_t n, ChunkHeader& h, size_t* body_offset);

}  // namespace ckptfwd::codec::chain
