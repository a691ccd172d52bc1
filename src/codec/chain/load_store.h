// Unaligned typed loads and stores (memcpy compiles to plain moves).
#pragma once
#include <cstdint>
#include <cstring>

namespace ckptfwd::codec::chain {

template <class T>
inline T load(const uint8_t* p) {
  T v;
  memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
inline void store(uint8_t* p, T v) {
  memcpy(p, &v, sizeof v);
}

}  // namespace ckptfwd::codec::chain
