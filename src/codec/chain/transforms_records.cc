// Records: a stream of records of several lengths, each beginning with its own length in
// elements (LAMMPS's per-atom records: a count, x y z, integers in double slots, velocities,
// then lists of bonds whose length varies from atom to atom), stored field by field: every
// record's first value (the lengths), then every record's second value, and so on, the
// k-th column holding the k-th value of the records longer than k. A predictor after it
// runs along one field of consecutive records, as after kColumns for records of one length.
//
// A chunk is a slice of the stream, so it may begin and end inside a record: the `head`
// elements before the first record that parses to the end, and the elements after the last
// whole record, stay in place before and after the columns.
//
// Memory: nothing per record. The lengths are read where they lie (the records' first
// values when encoding, column 0 when decoding), so a hostile header's record count costs
// no allocation; the only buffers are a histogram of lengths and one cursor per column
// (kMaxRecordLen entries each), and find_records' mark per element (a quarter of the
// chunk's bytes at most: elements are 4 or 8 bytes).
#include <cmath>
#include <cstring>

#include "codec/chain/transforms.h"

namespace ckptfwd::codec::chain {
namespace {

// The length a record's first element states, or 0 when it is not a whole number in
// [1, kMaxRecordLen] (for floats: NaN, infinite, a fraction; for integers: out of range).
uint64_t length_at(const uint8_t* p, uint32_t w, DtypeKind kind) {
  double v = -1;
  if (kind == DtypeKind::kFloat && w == 8) {
    memcpy(&v, p, 8);
  } else if (kind == DtypeKind::kFloat && w == 4) {
    float f;
    memcpy(&f, p, 4);
    v = f;
  } else if (kind == DtypeKind::kSigned || kind == DtypeKind::kUnsigned) {
    uint64_t u = 0;
    memcpy(&u, p, w);  // little-endian host: the low w bytes
    if (kind == DtypeKind::kSigned && (u >> (8 * w - 1)) & 1) return 0;  // negative
    return u >= 1 && u <= kMaxRecordLen ? u : 0;
  } else {
    return 0;
  }
  if (!(v >= 1 && v <= static_cast<double>(kMaxRecordLen)) || v != std::floor(v)) return 0;
  return static_cast<uint64_t>(v);
}

// Parses the records from element `head` on: true when every record is whole up to a last
// one cut by the end (or none), with *count whole records and *used elements in them. An
// element `dead` marks (find_records) fails like a bad length.
bool parse_from(const uint8_t* in, uint64_t m, uint32_t w, DtypeKind kind, uint64_t head,
                uint64_t* count, uint64_t* used, const uint8_t* dead = nullptr) {
  uint64_t i = head, n = 0;
  while (i < m) {
    const uint64_t len = dead && dead[i] ? 0 : length_at(in + i * w, w, kind);
    if (len == 0) return false;
    if (len > m - i) break;  // the last record, cut by the end of the chunk
    i += len;
    ++n;
  }
  *count = n;
  *used = i - head;
  return true;
}

// Where record r's length lies: at its first value in record order (encoding), or at
// element head + r in column order (decoding: column 0).
struct Lengths {
  const uint8_t* base;  // the stream the lengths are read from
  uint32_t w;
  DtypeKind kind;
  bool in_columns;
  uint64_t head;
  // The length of record r, whose first value is element `at` in record order.
  uint64_t of(uint64_t r, uint64_t at) const {
    return length_at(base + (in_columns ? head + r : at) * w, w, kind);
  }
};

// Where each column begins (element index, the head included): column k holds one value of
// each record longer than k. Lengths are valid (the callers checked them).
std::vector<uint64_t> column_starts(const Lengths& len, uint64_t head, uint64_t count) {
  std::vector<uint64_t> longer(kMaxRecordLen + 1, 0);  // longer[k]: records of length > k
  uint64_t max_len = 0;
  for (uint64_t r = 0, at = head; r < count; ++r) {
    const uint64_t l = len.of(r, at);
    ++longer[l - 1];
    if (l > max_len) max_len = l;
    at += l;
  }
  for (uint64_t k = max_len; k-- > 1;) longer[k - 1] += longer[k];
  std::vector<uint64_t> starts(max_len, head);
  for (uint64_t k = 1; k < max_len; ++k) starts[k] = starts[k - 1] + longer[k - 1];
  return starts;
}

// Moves the records' values between record order and column order (forward: records in
// `in` to columns in `out`), element indices counted from the start of the chunk. W: the
// element width, so that each copy is of a size known at compile time.
template <uint32_t W, bool kForward>
void scatter(const uint8_t* in, uint8_t* out, const Lengths& len, uint64_t head, uint64_t count,
             std::vector<uint64_t> cursor) {
  uint64_t at = head;  // record r's first value in record order
  for (uint64_t r = 0; r < count; ++r) {
    const uint64_t l = len.of(r, at);
    for (uint64_t k = 0; k < l; ++k) {
      const uint64_t rec = at + k, col = cursor[k]++;
      if (kForward)
        memcpy(out + col * W, in + rec * W, W);
      else
        memcpy(out + rec * W, in + col * W, W);
    }
    at += l;
  }
}

// Between record order and column order for `count` records after `head` elements taking
// `used` elements; the head and the elements after the records stay where they are.
void permute(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, DtypeKind kind, uint64_t head,
             uint64_t count, uint64_t used, bool forward) {
  const Lengths len{in, w, kind, !forward, head};
  const std::vector<uint64_t> starts = column_starts(len, head, count);
  if (head) memcpy(out, in, head * w);
  if (w == 4 && forward) scatter<4, true>(in, out, len, head, count, starts);
  if (w == 4 && !forward) scatter<4, false>(in, out, len, head, count, starts);
  if (w == 8 && forward) scatter<8, true>(in, out, len, head, count, starts);
  if (w == 8 && !forward) scatter<8, false>(in, out, len, head, count, starts);
  const uint64_t after = head + used;
  if (m > after) memcpy(out + after * w, in + after * w, (m - after) * w);
}

}  // namespace

bool find_records(const uint8_t* in, uint64_t m, uint32_t w, DtypeKind kind, uint64_t* head,
                  uint64_t* count) {
  if (w != 4 && w != 8) return false;
  // Two heads whose parses meet at an element go on alike from there: an element a failed
  // parse passed through is dead for every later head, so all the tries together read each
  // element about three times at most (a run of ones that ends in a zero would otherwise
  // cost m reads for each of kMaxRecordLen heads). A failed walk is walked again to mark it.
  std::vector<uint8_t> dead(m, 0);
  const uint64_t tries = m < kMaxRecordLen ? m : kMaxRecordLen;
  for (uint64_t h = 0; h < tries; ++h) {
    uint64_t n = 0, used = 0;
    if (parse_from(in, m, w, kind, h, &n, &used, dead.data())) {
      if (n < 2) continue;
      *head = h;
      *count = n;
      return true;
    }
    // The failed walk again, marking each record start it passed, up to where it failed
    // (a bad length or a mark; a failed walk has no record cut by the end).
    for (uint64_t j = h; j < m && !dead[j];) {
      const uint64_t len = length_at(in + j * w, w, kind);
      if (len == 0) break;
      dead[j] = 1;
      j += len;
    }
  }
  return false;
}

bool to_records(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, DtypeKind kind,
                uint64_t head, uint64_t count) {
  if (w != 4 && w != 8) return false;
  uint64_t n = 0, used = 0;
  if (head > m || !parse_from(in, m, w, kind, head, &n, &used) || n != count) return false;
  permute(in, out, m, w, kind, head, count, used, true);
  return true;
}

bool from_records(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, DtypeKind kind,
                  uint64_t head, uint64_t count) {
  if (w != 4 && w != 8) return false;
  if (head > m || count > m - head) return false;
  // The lengths are column 0, right after the head: each is checked, and their sum fits
  // in the elements after the head, before anything is moved.
  uint64_t used = 0;
  for (uint64_t r = 0; r < count; ++r) {
    const uint64_t l = length_at(in + (head + r) * w, w, kind);
    if (l == 0 || l > m - head - used) return false;
    used += l;
  }
  permute(in, out, m, w, kind, head, count, used, false);
  return true;
}

}  // namespace ckptfwd::codec::chain
