// libFuzzer target: arbitrary bytes as a LAMMPS binary restart file. infer_lammps_restart
// must reject or accept without undefined behaviour, reads outside the input or unbounded
// work; an accepted map must pass check_variable_map, its one variable's extents and the
// residual must cover the input exactly once, and the JSON of it must be producible. A
// rejection must say why. Any broken promise aborts, so libFuzzer keeps the input.
//
// Random inputs rarely end with the closing string, so each input is also tried with it
// appended, which sends every mutation into the block search.
//
// Standalone build (from the repository root; needs clang with libFuzzer):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     tests/fuzz/fuzz_lammps.cc src/schema/lammps_restart.cc src/store/container/variable_map.cc \
//     src/common/json_text.cc -o /tmp/fuzz_lammps
//   mkdir -p /tmp/fuzz_lammps_corpus && /tmp/fuzz_lammps /tmp/fuzz_lammps_corpus \
//     tests/fuzz/seeds/lammps -max_total_time=60
// Seeds: tests/fuzz/seeds/lammps/ (restart files of a 32-atom Lennard-Jones run written by
// lmp, 2 ranks: the single file, a rank's file and the header file of a multi-file restart).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "map_promises.h"
#include "schema/lammps_restart.h"
#include "store/container/variable_map.h"

namespace {

void check(bool ok, const char* what, const std::string& detail) {
  ckptfwd::fuzz::promise(ok, "fuzz_lammps", what, detail);
}

void exercise(const uint8_t* data, size_t size) {
  using namespace ckptfwd;
  VariableMap m;
  std::string why;
  if (!schema::infer_lammps_restart(data, size, m, &why)) {
    check(!why.empty(), "rejected without a reason", "");
    check(m.empty(), "rejected but filled", "");
    return;
  }
  check(schema::is_lammps_restart(data, size), "accepted without the closing string", "");
  check(m.source == "lammps" && m.vars.size() <= 1, "source or variables", m.source);
  ckptfwd::fuzz::check_map_promises(m, size, "fuzz_lammps");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  exercise(data, size);
  static const char kClosing[] = "LammpS RestartT";
  std::vector<uint8_t> copy(data, data + size);
  copy.insert(copy.end(), kClosing, kClosing + sizeof(kClosing));
  exercise(copy.data(), copy.size());
  return 0;
}
