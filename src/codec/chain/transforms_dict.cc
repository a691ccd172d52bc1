// Dictionary of distinct values: for variables with few distinct values (masks, land
// fractions, categories). The table is ordered by value (floats by numeric order), so
// indices of nearby values are close and the predictors that follow still help.
#include <algorithm>
#include <type_traits>

#include "codec/chain/load_store.h"
#include "codec/chain/transforms.h"

namespace ckptfwd::codec::chain {
namespace {

// Open addressing, power-of-two capacity; key 0 is tracked apart so 0 can mean empty.
template <class T>
class ValueIndex {
 public:
  explicit ValueIndex(uint64_t limit) : limit_(limit) {
    size_t cap = 1024;
    while (cap < limit * 2 && cap < (size_t(1) << 18)) cap *= 2;
    keys_.assign(cap, 0);
    slots_.assign(cap, 0);
  }
  // False when a new value would exceed limit.
  bool insert(T v) {
    if (v == 0) {
      if (!has_zero_) {
        if (values_.size() >= limit_) return false;
        has_zero_ = true;
        values_.push_back(0);
      }
      return true;
    }
    size_t mask = keys_.size() - 1, h = hash(v) & mask;
    while (keys_[h] != 0) {
      if (keys_[h] == v) return true;
      h = (h + 1) & mask;
    }
    if (values_.size() >= limit_) return false;
    keys_[h] = v;
    values_.push_back(v);
    return true;
  }
  void set_slot(T v, uint32_t index) {
    if (v == 0) {
      zero_slot_ = index;
      return;
    }
    slots_[find(v)] = index;
  }
  uint32_t slot(T v) const { return v == 0 ? zero_slot_ : slots_[find(v)]; }
  std::vector<T>& values() { return values_; }

 private:
  static size_t hash(T v) {
    return static_cast<size_t>((uint64_t(v) * 0x9E3779B97F4A7C15ull) >> 20);
  }
  size_t find(T v) const {
    size_t mask = keys_.size() - 1, h = hash(v) & mask;
    while (keys_[h] != v) h = (h + 1) & mask;
    return h;
  }
  uint64_t limit_;
  std::vector<T> keys_;
  std::vector<uint32_t> slots_;
  std::vector<T> values_;
  bool has_zero_ = false;
  uint32_t zero_slot_ = 0;
};

// Numeric order of IEEE bit patterns (negative values reversed), plain order for integers.
template <class T>
T order_key(T v, bool is_float) {
  if (!is_float) return v;
  constexpr T sign = T(1) << (sizeof(T) * 8 - 1);
  return (v & sign) ? static_cast<T>(~v) : static_cast<T>(v | sign);
}

template <class T>
bool encode_typed(const uint8_t* in, uint8_t* out, uint64_t m, bool is_float, StepRecord& rec,
                  std::vector<uint8_t>& side) {
  ValueIndex<T> index(kMaxDictEntries);
  for (uint64_t i = 0; i < m; ++i)
    if (!index.insert(load<T>(in + i * sizeof(T)))) return false;
  std::vector<T>& values = index.values();
  std::sort(values.begin(), values.end(),
            [&](T a, T b) { return order_key(a, is_float) < order_key(b, is_float); });
  for (size_t k = 0; k < values.size(); ++k) index.set_slot(values[k], static_cast<uint32_t>(k));
  rec.spec = {Step::kDict, 0};
  rec.width = values.size() <= 256 ? 1 : 2;
  rec.count = values.size();
  for (uint64_t i = 0; i < m; ++i) {
    uint32_t s = index.slot(load<T>(in + i * sizeof(T)));
    rec.width == 1 ? store<uint8_t>(out + i, static_cast<uint8_t>(s))
                   : store<uint16_t>(out + 2 * i, static_cast<uint16_t>(s));
  }
  size_t at = side.size();
  side.resize(at + values.size() * sizeof(T));
  for (size_t k = 0; k < values.size(); ++k) store<T>(side.data() + at + k * sizeof(T), values[k]);
  return true;
}

template <class T>
uint64_t distinct_typed(const uint8_t* in, uint64_t m, uint64_t limit) {
  ValueIndex<T> index(limit);
  for (uint64_t i = 0; i < m; ++i)
    if (!index.insert(load<T>(in + i * sizeof(T)))) return limit + 1;
  return index.values().size();
}

}  // namespace

bool dict_encode(const uint8_t* in, uint8_t* out, uint64_t m, uint32_t w, bool is_float,
                 StepRecord& rec, std::vector<uint8_t>& side) {
  switch (w) {
    case 1:
      return encode_typed<uint8_t>(in, out, m, false, rec, side);
    case 2:
      return encode_typed<uint16_t>(in, out, m, false, rec, side);
    case 4:
      return encode_typed<uint32_t>(in, out, m, is_float, rec, side);
    case 8:
      return encode_typed<uint64_t>(in, out, m, is_float, rec, side);
    default:
      return false;
  }
}

namespace {
// Fixed widths turn the copy of each value into one load and store.
template <class T, class I, bool Swap>
bool decode_typed(const StepRecord& rec, const uint8_t* in, const uint8_t* side, uint8_t* out,
                  uint64_t m) {
  // An index past the table is corruption: checked per value, flagged once at the end.
  bool bad = false;
  for (uint64_t i = 0; i < m; ++i) {
    uint64_t s = load<I>(in + i * sizeof(I));
    bad |= s >= rec.count;
    s = s < rec.count ? s : 0;
    T v = load<T>(side + s * sizeof(T));
    if constexpr (Swap && sizeof(T) == 2) v = __builtin_bswap16(v);
    if constexpr (Swap && sizeof(T) == 4) v = __builtin_bswap32(v);
    if constexpr (Swap && sizeof(T) == 8) v = __builtin_bswap64(v);
    store<T>(out + i * sizeof(T), v);
  }
  return !bad;
}

template <class T, bool Swap>
bool decode_width(const StepRecord& rec, const uint8_t* in, const uint8_t* side, uint8_t* out,
                  uint64_t m) {
  return rec.width == 1 ? decode_typed<T, uint8_t, Swap>(rec, in, side, out, m)
                        : decode_typed<T, uint16_t, Swap>(rec, in, side, out, m);
}
}  // namespace

bool dict_decode(const StepRecord& rec, const uint8_t* in, const uint8_t* side, uint8_t* out,
                 uint64_t m, uint32_t w, bool swap_out) {
  switch (w) {
    case 1:
      return decode_width<uint8_t, false>(rec, in, side, out, m);
    case 2:
      return swap_out ? decode_width<uint16_t, true>(rec, in, side, out, m)
                      : decode_width<uint16_t, false>(rec, in, side, out, m);
    case 4:
      return swap_out ? decode_width<uint32_t, true>(rec, in, side, out, m)
                      : decode_width<uint32_t, false>(rec, in, side, out, m);
    default:
      return swap_out ? decode_width<uint64_t, true>(rec, in, side, out, m)
                      : decode_width<uint64_t, false>(rec, in, side, out, m);
  }
}

uint64_t count_distinct(const uint8_t* in, uint64_t m, uint32_t w, uint64_t limit) {
  switch (w) {
    case 1:
      return distinct_typed<uint8_t>(in, m, limit);
    case 2:
      return distinct_typed<uint16_t>(in, m, limit);
    case 4:
      return distinct_typed<uint32_t>(in, m, limit);
    case 8:
      return distinct_typed<uint64_t>(in, m, limit);
    default:
      return limit + 1;
  }
}

}  // namespace ckptfwd::codec::chain
