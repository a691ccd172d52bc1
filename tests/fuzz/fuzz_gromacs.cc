// libFuzzer target: arbitrary bytes as a GROMACS checkpoint. infer_gromacs_checkpoint must
// reject or accept without undefined behaviour or reads outside the input; an accepted map
// must pass check_variable_map, its extents and the residual must cover the input exactly
// once, and the JSON of it must be producible. A rejection must say why. Any broken promise
// aborts, so libFuzzer keeps the input.
//
// Random inputs rarely open with the magic, so each input is also tried with it put in
// front, which sends every mutation into the header and the search for the state entries.
//
// Standalone build (from the repository root; needs clang with libFuzzer):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     tests/fuzz/fuzz_gromacs.cc src/schema/gromacs_checkpoint.cc \
//     src/store/container/variable_map.cc src/common/json_text.cc -o /tmp/fuzz_gromacs
//   mkdir -p /tmp/fuzz_gromacs_corpus && /tmp/fuzz_gromacs /tmp/fuzz_gromacs_corpus \
//     tests/fuzz/seeds/gromacs -max_total_time=60
// Seeds: tests/fuzz/seeds/gromacs/ (a checkpoint of 663 water atoms written by gmx mdrun
// 2022: positions and velocities in single precision).
#include <cstdint>
#include <string>
#include <vector>

#include "map_promises.h"
#include "schema/gromacs_checkpoint.h"
#include "store/container/variable_map.h"

namespace {

void check(bool ok, const char* what, const std::string& detail) {
  ckptfwd::fuzz::promise(ok, "fuzz_gromacs", what, detail);
}

void exercise(const uint8_t* data, size_t size) {
  using namespace ckptfwd;
  VariableMap m;
  std::string why;
  if (!schema::infer_gromacs_checkpoint(data, size, m, &why)) {
    check(!why.empty(), "rejected without a reason", "");
    check(m.empty(), "rejected but filled", "");
    return;
  }
  check(schema::is_gromacs_checkpoint(data, size), "accepted without the magic", "");
  check(m.source == "gromacs" && !m.vars.empty() && m.vars.size() <= 3, "source or variables",
        m.source);
  ckptfwd::fuzz::check_map_promises(m, size, "fuzz_gromacs");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  exercise(data, size);
  std::vector<uint8_t> copy{0x00, 0x02, 0x9f, 0x29};
  copy.insert(copy.end(), data, data + size);
  exercise(copy.data(), copy.size());
  return 0;
}
