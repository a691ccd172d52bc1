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
    if (kind == DtypeKind::kSigned && w < 8 && (u >> (8 * w - 1)) & 1) return 0;  // negative
    if (kind == DtypeKind::kSigned && w == 8 && (u >> 63)) return 0;
    return u >= 1 && u <= kMaxRecordLen ? u : 0;
  } else {
    return 0;
  }
  if (!(v >= 1 && v <= static_cast<double>(kMaxRecordLen)) || v != std::floor(v)) return 0;
  return static_cast<uint64_t>(v);
}

// Parses the records from element `head` on: true when every record is whole up to a last
// one cut by the end (or none), with *count whole records and *used elements in them.
bool parse_from(const uint8_t* in, uint64_t m, uint32_t w, DtypeKind kind, uint64_t head,
                uint64_t* count, uint64_t* used) {
  uint64_t i = head, n = 0;
  while (i < m) {
    const uint64_t len = length_at(in + i * w, w, kind);
    if (len == 0) return false;
    if (len > m - i) break;  // the last record, cut by the end of the chunk
    i += len;
    ++n;
  }
  *count = n;
  *used = i - head;
  return true;
}

// Where each column begins in the columns area, from the lengths (each in
// [1, kMaxRecordLen]): column k holds one value of each record longer than k.
std::vector<uint64_t> column_starts(const std::vector<uint64_t>& lengths) {
  std::vector<uint64_t> longer(kMaxRecordLen + 1, 0);  // longer[k]: records of length > k
  uint64_t max_len = 0;
  for (uint64_t len : lengths) {
    ++longer[len - 1];
    if (len > max_len) max_len = len;
  }
  for (uint64_t k = max_len; k-- > 1;) longer[k - 1] += longer[k];
  std::vector<uint64_t> starts(max_len, 0);
  for (uint64_t k = 1; k < max_len; ++k) starts[k] = starts[k - 1] + longer[k - 1];
  return starts;
}

// Moves the values of the records between record order and column order: forward reads
// records from `in` (their first element at in[0]) and writes columns at the cursors' places
// of `out`; backward reads columns from `in` and writes records from out[0]. W: the element
// width, so that each copy is of a size known at compile time.
template <uint32_t W, bool kForward>
void scatter(const uint8_t* in, uint8_t* out, uint64_t count, const uint64_t* lengths,
             std::vector<uint64_t> cursor) {
  uint64_t at = 0;  // element of the first value of record r in record order
  for (uint64_t r = 0; r < count; ++r) {
    const uint64_t len = lengths[r];
    for (uint64_t k = 0; k < len; ++k) {
      const uint64_t rec = at + k, col = cursor[k]++;
      if (kForward)
        memcpy(out + col * W, in + rec * W, W);
      else
        memcpy(out + rec * W, in + col * W, W);
    }
    at += len;
  }
}

template <bool kForward>
void scatter_any(const uint8_t* in, uint8_t* out, uint32_t w, uint64_t count,
                 const uint64_t* lengths, const std::vector<uint64_t>& cursor) {
  switch (w) {
    case 1:
      return scatter<1, kForward>(in, out, count, lengths, cursor);
    case 2:
      return scatter<2, kForward>(in, out, count, lengths, cursor);
    case 4:
      return scatter<4, kForward>(in, out, count, lengths, cursor);
    default:
      return scatter<8, kForward>(in, out, count, lengths, cursor);
  }
}

// Between record order and column order (forward: records to columns) for records of
// these lengths after `head` elements; the head and the elements after the `used` ones of
// the records stay where they are.
void permute(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, uint64_t head,
             const std::vector<uint64_t>& lengths, uint64_t used, bool forward) {
  std::vector<uint64_t> starts = column_starts(lengths);
  for (uint64_t& s : starts) s += head;
  memcpy(out, in, head * w);
  if (forward)
    scatter_any<true>(in + head * w, out, w, lengths.size(), lengths.data(), starts);
  else
    scatter_any<false>(in, out + head * w, w, lengths.size(), lengths.data(), starts);
  memcpy(out + (head + used) * w, in + (head + used) * w, (m - head - used) * w);
}

}  // namespace

bool find_records(const uint8_t* in, uint64_t m, uint32_t w, DtypeKind kind, uint64_t* head,
                  uint64_t* count) {
  if (w != 1 && w != 2 && w != 4 && w != 8) return false;
  // Two heads whose parses meet at an element go on alike from there: an element a failed
  // parse passed through is dead for every later head, so all the tries together read each
  // element about once (a run of ones that ends in a zero would otherwise cost m reads for
  // each of kMaxRecordLen heads).
  std::vector<uint8_t> dead(m, 0);
  std::vector<uint64_t> path;
  const uint64_t tries = m < kMaxRecordLen ? m : kMaxRecordLen;
  for (uint64_t h = 0; h < tries; ++h) {
    path.clear();
    uint64_t i = h;
    bool ok = true;
    while (i < m) {
      const uint64_t len = dead[i] ? 0 : length_at(in + i * w, w, kind);
      if (len == 0) {
        ok = false;
        break;
      }
      if (len > m - i) break;  // the last record, cut by the end of the chunk
      path.push_back(i);
      i += len;
    }
    if (ok && path.size() >= 2) {
      *head = h;
      *count = path.size();
      return true;
    }
    if (!ok)
      for (uint64_t at : path) dead[at] = 1;
  }
  return false;
}

bool to_records(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, DtypeKind kind,
                uint64_t head, uint64_t count) {
  uint64_t n = 0, used = 0;
  if (head > m || !parse_from(in, m, w, kind, head, &n, &used) || n != count) return false;
  std::vector<uint64_t> lengths(count);
  for (uint64_t r = 0, at = head; r < count; at += lengths[r], ++r)
    lengths[r] = length_at(in + at * w, w, kind);
  permute(in, out, m, w, head, lengths, used, true);
  return true;
}

bool from_records(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, DtypeKind kind,
                  uint64_t head, uint64_t count) {
  if (w != 1 && w != 2 && w != 4 && w != 8) return false;
  if (head > m || count > m - head) return false;
  // The lengths are column 0, right after the head; each is checked before it is used.
  std::vector<uint64_t> lengths(count);
  uint64_t used = 0;
  for (uint64_t r = 0; r < count; ++r) {
    lengths[r] = length_at(in + (head + r) * w, w, kind);
    if (lengths[r] == 0 || lengths[r] > m - head - used) return false;
    used += lengths[r];
  }
  permute(in, out, m, w, head, lengths, used, false);
  return true;
}

}  // namespace ckptfwd::codec::chain
