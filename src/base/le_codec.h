// Little-endian encoding of the on-disk indexes (container index, variable maps): fixed
// width integers and length-prefixed strings. The decoder treats its bytes as hostile:
// every read is bounds-checked, and once one fails every later one fails too, so a parser
// reads a whole record and checks ok() once.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ckptfwd {

class LeEncoder {
 public:
  std::vector<uint8_t> buf;
  void u8(uint8_t v) { buf.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) buf.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) buf.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  // u32 length, then the bytes.
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  // A byte loop rather than vector::insert: GCC 12 reports a false stringop-overflow for
  // the insert of a small constant array into an empty vector.
  void raw(const char* p, size_t n) {
    for (size_t i = 0; i < n; ++i) buf.push_back(static_cast<uint8_t>(p[i]));
  }
};

class LeDecoder {
 public:
  LeDecoder(const uint8_t* p, size_t n, size_t pos = 0) : p_(p), n_(n), pos_(pos <= n ? pos : n) {}
  bool ok() const { return ok_; }
  size_t left() const { return n_ - pos_; }
  size_t pos() const { return pos_; }
  bool need(size_t k) {
    if (!ok_ || k > n_ - pos_) ok_ = false;
    return ok_;
  }
  bool skip(size_t k) {
    if (need(k)) pos_ += k;
    return ok_;
  }
  uint8_t u8() { return need(1) ? p_[pos_++] : 0; }
  uint32_t u32() {
    if (!need(4)) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p_[pos_++]) << (8 * i);
    return v;
  }
  uint64_t u64() {
    if (!need(8)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p_[pos_++]) << (8 * i);
    return v;
  }
  std::string str() {
    uint32_t len = u32();
    if (!need(len)) return {};
    std::string s(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return s;
  }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t pos_;
  bool ok_ = true;
};

}  // namespace ckptfwd
