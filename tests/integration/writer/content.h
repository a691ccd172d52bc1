// Deterministic checkpoint content: the same (rank, file, generation) always gives the same
// bytes, so a run with the library and one without can be compared byte for byte.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ckpt_writer {

// A tiny splitmix64 generator (deterministic across platforms, unlike std:: distributions).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next();

 private:
  uint64_t s_;
};

// Seed from rank, file id and generation.
uint64_t seed_for(int rank, int file_id, int generation = 0);

// n pseudo-random bytes with some repetition (compressible like real state, not all noise).
std::vector<unsigned char> make_bytes(uint64_t seed, size_t n);
// A smooth float64 field (what simulation checkpoints mostly hold), slightly noisy.
std::vector<double> make_field(uint64_t seed, size_t n);
// A fixed-size binary header: magic, rank, step, element count.
std::vector<unsigned char> make_header(int rank, int64_t step, int64_t count);
// Text lines "i value" with values printed exactly (%.17g).
std::string make_text(uint64_t seed, int lines);

}  // namespace ckpt_writer
