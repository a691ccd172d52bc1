#include "content.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace ckpt_writer {

uint64_t Rng::next() {
  uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t seed_for(int rank, int file_id, int generation) {
  return (static_cast<uint64_t>(rank) << 32) ^ (static_cast<uint64_t>(file_id) << 8) ^
         static_cast<uint64_t>(generation) ^ 0x636b7074ull;
}

std::vector<unsigned char> make_bytes(uint64_t seed, size_t n) {
  Rng rng(seed);
  std::vector<unsigned char> out(n);
  size_t i = 0;
  while (i < n) {
    uint64_t r = rng.next();
    // Every fourth word is a short run of one byte value: real state has structure.
    size_t run = (r & 3) == 0 ? 16 + (r >> 58) : 8;
    for (size_t k = 0; k < run && i < n; ++k, ++i)
      out[i] = (r & 3) == 0 ? static_cast<unsigned char>(r >> 8)
                            : static_cast<unsigned char>(r >> (8 * (k % 8)));
  }
  return out;
}

std::vector<double> make_field(uint64_t seed, size_t n) {
  Rng rng(seed);
  std::vector<double> out(n);
  const double phase = static_cast<double>(seed % 1000) * 0.001;
  for (size_t i = 0; i < n; ++i) {
    double noise = static_cast<double>(rng.next() >> 11) * 0x1.0p-53 * 1e-6;
    out[i] = 300.0 + 25.0 * std::sin(0.003 * static_cast<double>(i) + phase) + noise;
  }
  return out;
}

std::vector<unsigned char> make_header(int rank, int64_t step, int64_t count) {
  std::vector<unsigned char> h(32, 0);
  std::memcpy(h.data(), "CKPTWRT1", 8);
  int32_t r = rank;
  std::memcpy(h.data() + 8, &r, 4);
  std::memcpy(h.data() + 16, &step, 8);
  std::memcpy(h.data() + 24, &count, 8);
  return h;
}

std::string make_text(uint64_t seed, int lines) {
  auto field = make_field(seed, static_cast<size_t>(lines));
  std::string out;
  char line[64];
  for (int i = 0; i < lines; ++i) {
    std::snprintf(line, sizeof line, "%d %.17g\n", i, field[static_cast<size_t>(i)]);
    out += line;
  }
  return out;
}

}  // namespace ckpt_writer
