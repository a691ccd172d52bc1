// The transforms of a chain, forward (encode) and inverse (decode). A stream is m elements
// of width w bytes; in and out never overlap. Inverses run on hostile bytes: they check
// what they read (indices, positions) and return false rather than write out of bounds.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "codec/chain/chain_format.h"

namespace ckptfwd::codec::chain {

// Byte order reversal of each element (its own inverse); w in {2, 4, 8}. in == out is
// allowed.
void swap_bytes(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w);

// Byte shuffle: byte b of element i goes to out[b * m + i].
void shuffle(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w);
void unshuffle(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w);
// Elements [i0, i0 + n) of a stream of m elements: shuffle_range takes them interleaved
// from in[0, n * w) and writes their bytes into the m-byte planes of out; unshuffle_range
// reads them from the planes of in and writes them interleaved to out[0, n * w).
void shuffle_range(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t i0,
                   uint64_t n);
void unshuffle_range(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t i0,
                     uint64_t n);

// Columns: the first rows * row elements (rows = m / row) as `row` columns of rows
// elements each (element c of record i goes to out[c * rows + i]); the m % row elements
// after them stay in place. A copy when row < 2 or there are fewer than two rows.
void to_columns(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t row);
void from_columns(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t row);

// Records that begin with their own length in elements (a whole number in
// [1, kMaxRecordLen], read as the element's dtype: float or integer), stored field by field
// (transforms_records.cc): the `head` elements before the first record stay first, then the
// lengths of the `count` whole records, their second values, and so on (column k holds the
// k-th value of each record longer than k), then the elements after the last whole record.
// find_records: the first head (below kMaxRecordLen) from which the chunk parses as records
// up to a last one the end may cut, with at least two whole records; false when none does.
// to_records fails when the chunk does not parse from head into count records; from_records
// when the lengths it reads do not fit in the m elements. w in {4, 8} (all three fail for
// other widths: records of one- or two-byte values are no layout anyone writes, and
// would make the step's bookkeeping larger than the chunk).
inline constexpr uint64_t kMaxRecordLen = 4096;
bool find_records(const uint8_t* in, uint64_t m, uint32_t w, DtypeKind kind, uint64_t* head,
                  uint64_t* count);
bool to_records(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, DtypeKind kind,
                uint64_t head, uint64_t count);
bool from_records(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, DtypeKind kind,
                  uint64_t head, uint64_t count);

// Byte delta over the whole buffer of n bytes.
void byte_delta(const uint8_t* in, uint8_t* out, uint64_t n);
void byte_undelta(const uint8_t* in, uint8_t* out, uint64_t n);

// Predictors on the integer bit pattern of w-byte elements (w in {1, 2, 4, 8}); row is the
// row width for kPrevRow, kLorenzo and kLorenzo3, plane the elements of a plane of the two
// innermost dimensions for kLorenzo3 (as predictor_plane gives it). zigzag maps small
// signed residuals to small codes. swap_out: unpredict stores its values byte-swapped (the
// inverse of a kSwap before it).
void predict(Step kind, bool zigzag, const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w,
             uint64_t row, uint64_t plane = 0);
void unpredict(Step kind, bool zigzag, const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w,
               uint64_t row, bool swap_out = false, uint64_t plane = 0);

// The row width the 2-D predictors use for m elements: row, or m when there is one row
// (0 or at least m), where they become the previous value.
uint64_t predictor_row(uint64_t row, uint64_t m);
// The plane kLorenzo3 uses for m elements in rows of row (predictor_row's): the product of
// the two innermost dimensions (inner, outermost first) when it is a whole number of rows
// short of m, else 0, where it predicts as kLorenzo does.
uint64_t predictor_plane(const std::vector<uint64_t>& inner, uint64_t row, uint64_t m);
// unpredict on elements [i0, i0 + n) of a stream, one block at a time (chain_decode.cc):
// in holds the n residuals; x points at element i0's slot of the decoded values, the
// slots before it holding the elements before i0 (back to i0 - 1 for kDelta and kXor,
// i0 - row - 1 for the 2-D kinds, i0 - plane - row - 1 for kLorenzo3, or to element 0);
// row as predictor_row gives it, plane as predictor_plane.
void unpredict_range(Step kind, bool zigzag, const uint8_t* in, uint8_t* x, uint64_t i0, uint64_t n,
                     uint32_t w, uint64_t row, uint64_t plane = 0);

// Integer wavelet (transforms_wavelet.cc): CDF 5/3 lifting along rows of row elements
// (predictor_row's) and then along the columns of the rows, `levels` times on the low-pass
// corner, in w-bit wrapping arithmetic (w in {1, 2, 4, 8}), coefficients zigzagged. Exact
// for any input; elements past the last whole row are only zigzagged.
void wavelet_forward(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t row,
                     uint8_t levels);
void wavelet_inverse(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t row,
                     uint8_t levels);

// Exact fixed-point (floats w in {4, 8}): out gets rec.width-byte integers, side the
// exceptions (u64 positions, then the w-byte values). rec.count and rec.width are set.
void fixed_encode(uint8_t e, const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w,
                  StepRecord& rec, std::vector<uint8_t>& side);
bool fixed_decode(const StepRecord& rec, const uint8_t* in, const uint8_t* side, uint8_t* out,
                  uint64_t m, uint32_t w);
// The values of fixed_decode for n elements (in: rec.width-byte integers), without the
// exceptions, stored byte-swapped when swap_out (the inverse of a kSwap before the step).
// rec must have passed side_size.
void fixed_decode_range(const StepRecord& rec, const uint8_t* in, uint8_t* out, uint64_t n,
                        uint32_t w, bool swap_out);
// Fraction of the first m values that fixed-point with exponent e does not represent; it
// stops counting once the fraction is sure to exceed stop_above (the selector's limit), so
// a larger result only means "above stop_above".
double fixed_miss_rate(uint8_t e, const uint8_t* in, uint64_t m, uint32_t w,
                       double stop_above = 1.0);

// Dictionary: false (nothing written) when there are more than kMaxDictEntries distinct
// values. side gets the table (rec.count entries of w bytes, ordered by value).
bool dict_encode(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, bool is_float,
                 StepRecord& rec, std::vector<uint8_t>& side);
// w in {1, 2, 4, 8} (side_size checks it); swap_out stores the values byte-swapped.
bool dict_decode(const StepRecord& rec, const uint8_t* in, const uint8_t* side, uint8_t* out,
                 uint64_t m, uint32_t w, bool swap_out = false);
// Distinct values among the first m (stops counting past limit).
uint64_t count_distinct(const uint8_t* in, uint64_t m, uint32_t w, uint64_t limit);

// Error-bounded quantization of floats (lossy, opt-in): every value is checked against
// the bound after quantization; the ones that miss it are kept verbatim as exceptions.
void quant_encode(uint8_t mode, double abs, double rel, const uint8_t* in, uint8_t* out, uint64_t m,
                  uint32_t w, StepRecord& rec, std::vector<uint8_t>& side);
bool quant_decode(const StepRecord& rec, const uint8_t* in, const uint8_t* side, uint8_t* out,
                  uint64_t m, uint32_t w);
// The bound a quantization record's step was chosen for: absolute (mode 0) or relative.
double quant_bound(const StepRecord& rec);

// Bytes of side data a step record implies (for fixed, dict and quant), with overflow and
// bounds checks; false when the record is impossible for m elements of width w.
bool side_size(const StepRecord& rec, uint64_t m, uint32_t w, uint64_t* bytes);

}  // namespace ckptfwd::codec::chain
