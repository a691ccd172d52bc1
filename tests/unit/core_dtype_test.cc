// The dtype table (src/base/dtype.h) against the three readers of dtypes: the byte codes
// (dtype_name, dtype_size), the store's element size of a name (dtype_name_size,
// store/container/variable_map.h) and the codec's dtype of a name (chain::parse_dtype,
// codec/chain/chain_format.h). Each reader must accept exactly the names it accepted before it
// read the table, with the same sizes, kinds, byte orders and codes: the literal lists
// below are what they accepted, and every probe name (near misses included) must give in
// each reader what the table gives.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "codec/chain/chain_format.h"
#include "store/container/variable_map.h"

namespace ckptfwd {
namespace {

struct Fixed {
  const char* name;
  uint32_t size;
  DtypeKind kind;
  bool big_endian;
  int code;  // -1: none
};

// Every name of a fixed size the readers accepted.
const Fixed kFixed[] = {
    {"bytes", 1, DtypeKind::kBytes, false, 0},    {"I8", 1, DtypeKind::kSigned, false, 1},
    {"U8", 1, DtypeKind::kUnsigned, false, 2},    {"I16LE", 2, DtypeKind::kSigned, false, 3},
    {"U16LE", 2, DtypeKind::kUnsigned, false, 4}, {"I32LE", 4, DtypeKind::kSigned, false, 5},
    {"U32LE", 4, DtypeKind::kUnsigned, false, 6}, {"I64LE", 8, DtypeKind::kSigned, false, 7},
    {"U64LE", 8, DtypeKind::kUnsigned, false, 8}, {"F32LE", 4, DtypeKind::kFloat, false, 9},
    {"F64LE", 8, DtypeKind::kFloat, false, 10},   {"CHAR", 1, DtypeKind::kUnsigned, false, -1},
    {"I16BE", 2, DtypeKind::kSigned, true, -1},   {"U16BE", 2, DtypeKind::kUnsigned, true, -1},
    {"I32BE", 4, DtypeKind::kSigned, true, -1},   {"U32BE", 4, DtypeKind::kUnsigned, true, -1},
    {"I64BE", 8, DtypeKind::kSigned, true, -1},   {"U64BE", 8, DtypeKind::kUnsigned, true, -1},
    {"F32BE", 4, DtypeKind::kFloat, true, -1},    {"F64BE", 8, DtypeKind::kFloat, true, -1},
};

// Sized names at the edges of their rules: the store's size (0: refused; at most 9 digits,
// n > 0) and the codec's element size (1 for a name it reads as bytes; at most 6 digits
// and n <= chain::kMaxElemSize).
// The kind as its byte (the codec's Dtype and the table compare whatever enum holds it).
template <typename Kind>
int kind_byte(Kind k) {
  return static_cast<int>(k);
}

struct Sized {
  const char* name;
  uint32_t store_size;
  uint32_t codec_elem;
};
const Sized kSized[] = {
    {"STR1", 1, 1},
    {"STR24", 24, 24},
    {"CMP24", 24, 24},
    {"B3", 3, 3},
    {"STR007", 7, 7},
    {"CMP000007", 7, 7},
    {"B0000007", 7, 1},  // 7 digits: past the codec's 6
    {"STR65536", 65536, 65536},
    {"CMP65537", 65537, 1},
    {"B999999", 999999, 1},
    {"STR123456789", 123456789, 1},
    {"CMP999999999", 999999999, 1},
    {"B000000001", 1, 1},
    {"STR1000000000", 0, 1},  // 10 digits
    {"STR0", 0, 1},
    {"CMP000", 0, 1},
    {"B", 0, 1},
    {"STR", 0, 1},
    {"STR12a", 0, 1},
    {"B-1", 0, 1},
    {"B+1", 0, 1},
    {"STR 8", 0, 1},
    {"str8", 0, 1},
    {"b8", 0, 1},
    {"BB8", 0, 1},
    {"CHAR1", 0, 1},
};

// Names around the accepted ones: each fixed name cut, extended and in other case, the
// grid of kind letters, widths and orders, the sized prefixes with many digit strings.
std::vector<std::string> probes() {
  std::vector<std::string> out = {"",       "byte", "BYTES", "Bytes",
                                  "bytes ", " I8",  "I8 ",   std::string("I8\0", 3),
                                  "STRING", "CMP",  "F16LE", "F16BE"};
  for (const Fixed& f : kFixed) {
    std::string n = f.name;
    out.push_back(n);
    out.push_back(n.substr(0, n.size() - 1));
    out.push_back(n + "X");
    out.push_back(n + "0");
    std::string lower = n;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.push_back(lower);
  }
  for (std::string kind : {"I", "U", "F", "B", "C", "S", "X", ""})
    for (std::string bits : {"", "1", "8", "08", "16", "24", "32", "64", "128"})
      for (std::string order : {"", "LE", "BE", "le", "Le", "XE", "L"})
        out.push_back(kind + bits + order);
  for (std::string prefix : {"STR", "CMP", "B", "str", "Str", "S", "C", "BB", "CHAR", "bytes"})
    for (std::string digits :
         {"",          "0",         "00",        "1",          "01",         "7",
          "24",        "999",       "65535",     "65536",      "65537",      "99999",
          "100000",    "999999",    "0999999",   "1000000",    "0000001",    "12345678",
          "000000001", "123456789", "999999999", "0000000001", "1000000000", "4294967296",
          "12a",       "a1",        "-1",        "+1",         " 1",         "1 "})
      out.push_back(prefix + digits);
  for (const Sized& s : kSized) out.push_back(s.name);
  return out;
}

TEST(DtypeTable, CodesNameAndSizeAsBefore) {
  const Fixed* by_code[kMaxDtypeCode + 1] = {};
  for (const Fixed& f : kFixed)
    if (f.code >= 0) by_code[f.code] = &f;
  for (unsigned c = 0; c < 256; ++c) {
    const uint8_t code = static_cast<uint8_t>(c);
    if (c <= kMaxDtypeCode) {
      ASSERT_NE(by_code[c], nullptr) << c;
      EXPECT_STREQ(dtype_name(code), by_code[c]->name) << c;
      EXPECT_EQ(dtype_size(code), by_code[c]->size) << c;
      EXPECT_EQ(kDtypes[c].name, by_code[c]->name) << c;
      EXPECT_EQ(kDtypes[c].code, c);
    } else {
      EXPECT_EQ(dtype_name(code), nullptr) << c;
      EXPECT_EQ(dtype_size(code), 0u) << c;
    }
  }
}

TEST(DtypeTable, HoldsExactlyTheFixedNames) {
  ASSERT_EQ(std::size(kDtypes), std::size(kFixed));
  for (const Fixed& f : kFixed) {
    const DtypeEntry* e = nullptr;
    for (const DtypeEntry& x : kDtypes)
      if (x.name == f.name) e = &x;
    ASSERT_NE(e, nullptr) << f.name;
    EXPECT_EQ(e->size, f.size) << f.name;
    EXPECT_EQ(e->kind, f.kind) << f.name;
    EXPECT_EQ(e->big_endian, f.big_endian) << f.name;
    EXPECT_EQ(e->code, f.code < 0 ? kNoDtypeCode : f.code) << f.name;
  }
}

TEST(DtypeTable, StoreSizeOfEveryNameAsBefore) {
  for (const Fixed& f : kFixed) EXPECT_EQ(dtype_name_size(f.name), f.size) << f.name;
  for (const Sized& s : kSized) EXPECT_EQ(dtype_name_size(s.name), s.store_size) << s.name;
  for (const std::string& p : probes()) {
    std::optional<DtypeInfo> t = dtype_lookup(p);
    EXPECT_EQ(dtype_name_size(p), t ? t->size : 0u) << p;
  }
}

TEST(DtypeTable, CodecDtypeOfEveryNameAsBefore) {
  using codec::chain::parse_dtype;
  for (const Fixed& f : kFixed) {
    codec::chain::Dtype d = parse_dtype(f.name);
    EXPECT_EQ(d.elem, f.size) << f.name;
    EXPECT_EQ(kind_byte(d.kind), kind_byte(f.kind)) << f.name;
    EXPECT_EQ(d.big_endian, f.big_endian) << f.name;
  }
  for (const Sized& s : kSized) {
    codec::chain::Dtype d = parse_dtype(s.name);
    EXPECT_EQ(d.elem, s.codec_elem) << s.name;
    EXPECT_EQ(kind_byte(d.kind), kind_byte(DtypeKind::kBytes)) << s.name;
    EXPECT_FALSE(d.big_endian) << s.name;
  }
  // The codec reads a name the table knows, with at most 6 digits of <n> and n within
  // its element bound, as the table has it; every other name as bytes.
  for (const std::string& p : probes()) {
    std::optional<DtypeInfo> t = dtype_lookup(p, 6);
    DtypeInfo want = t && t->size <= codec::chain::kMaxElemSize ? *t : DtypeInfo{};
    codec::chain::Dtype d = parse_dtype(p);
    EXPECT_EQ(d.elem, want.size) << p;
    EXPECT_EQ(kind_byte(d.kind), kind_byte(want.kind)) << p;
    EXPECT_EQ(d.big_endian, want.big_endian) << p;
  }
}

TEST(DtypeTable, LookupOfTheListedNames) {
  for (const Fixed& f : kFixed)
    EXPECT_EQ(dtype_lookup(f.name), (DtypeInfo{f.size, f.kind, f.big_endian})) << f.name;
  for (const Sized& s : kSized) {
    std::optional<DtypeInfo> t = dtype_lookup(s.name);
    EXPECT_EQ(t ? t->size : 0u, s.store_size) << s.name;
  }
}

}  // namespace
}  // namespace ckptfwd
