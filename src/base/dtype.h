// Element types of checkpoint bytes: the one table of dtype names, their element sizes,
// kinds and byte orders, and the byte codes of the little-endian ones. Every reader of a
// dtype goes through it: the variable maps of the store (store/container/variable_map.h), the typed
// codec chains (codec/chain/chain_format.h), and the hints below.
//
// Dtype names (elements of `size` bytes):
//   I8 U8, I16LE I16BE U16LE U16BE, I32LE I32BE U32LE U32BE, I64LE I64BE U64LE U64BE,
//   F32LE F32BE F64LE F64BE       integers and IEEE floats with their byte order
//   CHAR                          1-byte text characters
//   STR<n>                        fixed-length strings of n bytes
//   CMP<n>                        compound (struct) elements of n bytes
//   B<n>                          any other element of n bytes (opaque, bitfield, enum...)
//   bytes                         untyped bytes (size 1), e.g. a schema's `bytes` field
// <n> is decimal, leading zeros allowed, n > 0.
//
// A hint says "bytes [off, off+len) of this file are an array of <dtype>" (MPI-IO file
// views); the data-aware merge schemes and codecs use them. Hints never affect
// correctness: a wrong or missing hint only changes how well bytes compress.
//
// Hints file (library -> forwarder, like the extents files of protocol.h): in the session
// dir, named h<vid>.<pid>.<seq>, mode 0600, a sequence of 17-byte records:
//   u64 offset (little endian) | u64 length (little endian) | u8 dtype code (DtypeCode)
// Records may come in any order and overlap; later records win where they overlap. Among
// them, records of the codes of base/view_shape.h carry the global arrays of the views.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace ckptfwd {

// The byte code of a dtype in hints files and in containers' hint records
// (store/container/container_format.cc): fixed, as both are stored.
enum class DtypeCode : uint8_t {
  kBytes = 0,  // untyped; never written as a hint
  kI8 = 1,
  kU8 = 2,
  kI16LE = 3,
  kU16LE = 4,
  kI32LE = 5,
  kU32LE = 6,
  kI64LE = 7,
  kU64LE = 8,
  kF32LE = 9,
  kF64LE = 10,
};
inline constexpr uint8_t kMaxDtypeCode = 10;
inline constexpr unsigned kHintRecordBytes = 17;

// How an element's bytes read as a number. The kChain chunk header stores it as a u8
// (codec/chain/chain_format.h): the values are fixed.
enum class DtypeKind : uint8_t { kBytes = 0, kUnsigned = 1, kSigned = 2, kFloat = 3 };

// No byte code: hints and containers' hint records carry only the little-endian numbers.
inline constexpr uint8_t kNoDtypeCode = 0xff;

struct DtypeEntry {
  std::string_view name;
  uint8_t size;  // bytes per element
  DtypeKind kind;
  bool big_endian;
  uint8_t code;  // its DtypeCode, or kNoDtypeCode
};

// Every dtype of a fixed name. The first kMaxDtypeCode + 1 are in the order of their
// codes (kDtypes[code] is the dtype of code).
inline constexpr DtypeEntry kDtypes[] = {
    {"bytes", 1, DtypeKind::kBytes, false, 0},
    {"I8", 1, DtypeKind::kSigned, false, 1},
    {"U8", 1, DtypeKind::kUnsigned, false, 2},
    {"I16LE", 2, DtypeKind::kSigned, false, 3},
    {"U16LE", 2, DtypeKind::kUnsigned, false, 4},
    {"I32LE", 4, DtypeKind::kSigned, false, 5},
    {"U32LE", 4, DtypeKind::kUnsigned, false, 6},
    {"I64LE", 8, DtypeKind::kSigned, false, 7},
    {"U64LE", 8, DtypeKind::kUnsigned, false, 8},
    {"F32LE", 4, DtypeKind::kFloat, false, 9},
    {"F64LE", 8, DtypeKind::kFloat, false, 10},
    {"CHAR", 1, DtypeKind::kUnsigned, false, kNoDtypeCode},
    {"I16BE", 2, DtypeKind::kSigned, true, kNoDtypeCode},
    {"U16BE", 2, DtypeKind::kUnsigned, true, kNoDtypeCode},
    {"I32BE", 4, DtypeKind::kSigned, true, kNoDtypeCode},
    {"U32BE", 4, DtypeKind::kUnsigned, true, kNoDtypeCode},
    {"I64BE", 8, DtypeKind::kSigned, true, kNoDtypeCode},
    {"U64BE", 8, DtypeKind::kUnsigned, true, kNoDtypeCode},
    {"F32BE", 4, DtypeKind::kFloat, true, kNoDtypeCode},
    {"F64BE", 8, DtypeKind::kFloat, true, kNoDtypeCode},
};

namespace dtype_detail {
constexpr bool codes_in_order() {
  for (uint8_t c = 0; c <= kMaxDtypeCode; ++c)
    if (kDtypes[c].code != c || kDtypes[c].big_endian) return false;
  for (size_t i = kMaxDtypeCode + 1; i < std::size(kDtypes); ++i)
    if (kDtypes[i].code != kNoDtypeCode) return false;
  return true;
}
}  // namespace dtype_detail
static_assert(dtype_detail::codes_in_order(), "kDtypes[code] must be the dtype of code");

// The prefixes of the names that carry their size: STR<n>, CMP<n>, B<n> (kind kBytes).
inline constexpr std::string_view kSizedDtypePrefixes[] = {"STR", "CMP", "B"};
// Digits of <n> the store reads (so that n fits in 32 bits).
inline constexpr size_t kMaxDtypeDigits = 9;

struct DtypeInfo {
  uint32_t size = 1;  // bytes per element
  DtypeKind kind = DtypeKind::kBytes;
  bool big_endian = false;
  bool operator==(const DtypeInfo&) const = default;
};

// The dtype `name` stands for: an entry of kDtypes, or a sized name whose <n> has at most
// max_digits (<= kMaxDtypeDigits) digits. nullopt for any other name.
constexpr std::optional<DtypeInfo> dtype_lookup(std::string_view name,
                                                size_t max_digits = kMaxDtypeDigits) {
  for (const DtypeEntry& e : kDtypes)
    if (name == e.name) return DtypeInfo{e.size, e.kind, e.big_endian};
  for (std::string_view prefix : kSizedDtypePrefixes) {
    if (!name.starts_with(prefix)) continue;
    std::string_view digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > max_digits || max_digits > kMaxDtypeDigits)
      return std::nullopt;
    uint32_t n = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      n = n * 10 + static_cast<uint32_t>(c - '0');
    }
    if (n == 0) return std::nullopt;
    return DtypeInfo{n, DtypeKind::kBytes, false};
  }
  return std::nullopt;
}

// "F64LE", "I32LE", ... ("bytes" for kBytes, nullptr for an unknown code).
// The names of kDtypes are string literals, so name.data() ends in a NUL.
inline const char* dtype_name(uint8_t code) {
  return code <= kMaxDtypeCode ? kDtypes[code].name.data() : nullptr;
}

// Element size in bytes (1 for kBytes, 0 for an unknown code).
inline unsigned dtype_size(uint8_t code) { return code <= kMaxDtypeCode ? kDtypes[code].size : 0; }

}  // namespace ckptfwd
