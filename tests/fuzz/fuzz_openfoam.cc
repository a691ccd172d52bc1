// libFuzzer target: arbitrary bytes as an OpenFOAM field file written with format binary.
// infer_openfoam_field must reject or accept without undefined behaviour or reads outside
// the input; an accepted map must pass check_variable_map, its extents and the residual
// must cover the input exactly once, and the JSON of it must be producible. A rejection
// must say why. Any broken promise aborts, so libFuzzer keeps the input.
//
// Random inputs rarely start with a FoamFile header saying binary, so each input is also
// tried after such a header, which sends every mutation into the list scanner.
//
// Standalone build (from the repository root; needs clang with libFuzzer):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     tests/fuzz/fuzz_openfoam.cc src/schema/openfoam_field.cc \
//     src/store/container/variable_map.cc src/common/json_text.cc -o /tmp/fuzz_openfoam
//   mkdir -p /tmp/fuzz_openfoam_corpus && /tmp/fuzz_openfoam /tmp/fuzz_openfoam_corpus \
//     tests/fuzz/seeds/openfoam -max_total_time=60
// Seeds: tests/fuzz/seeds/openfoam/ (U, p and phi of one processor directory written by
// icoFoam with writeFormat binary, cavity case of 20x20 cells on 2 ranks).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "map_promises.h"
#include "schema/openfoam_field.h"
#include "store/container/variable_map.h"

namespace {

void check(bool ok, const char* what, const std::string& detail) {
  ckptfwd::fuzz::promise(ok, "fuzz_openfoam", what, detail);
}

void exercise(const uint8_t* data, size_t size) {
  using namespace ckptfwd;
  VariableMap m;
  std::string why;
  if (!schema::infer_openfoam_field(data, size, m, &why)) {
    check(!why.empty(), "rejected without a reason", "");
    check(m.empty(), "rejected but filled", "");
    return;
  }
  check(schema::is_openfoam_binary(data, size), "accepted without a binary header", "");
  check(m.source == "openfoam", "source", m.source);
  ckptfwd::fuzz::check_map_promises(m, size, "fuzz_openfoam");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  exercise(data, size);
  static const char kHeader[] =
      "FoamFile { format binary; arch \"LSB;label=32;scalar=64\"; object f; }\n";
  std::vector<uint8_t> copy(kHeader, kHeader + sizeof(kHeader) - 1);
  copy.insert(copy.end(), data, data + size);
  exercise(copy.data(), copy.size());
  return 0;
}
