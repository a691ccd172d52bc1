// libFuzzer target: arbitrary bytes as a netCDF classic file. infer_netcdf_classic must
// reject or accept without undefined behaviour or reads outside the input; an accepted
// map must pass check_variable_map and lie inside the input, its residual and extents
// must cover the input exactly once, and the JSON of it must be producible. A rejection
// must say why. Any broken promise aborts, so libFuzzer keeps the input.
//
// Most random inputs fail the "CDF" magic check at once, so each input is also tried with
// its first four bytes replaced by the magic of the version byte it picks (input[3] % 3),
// which sends every mutation into the header parser.
//
// Standalone build (from the repository root; needs clang with libFuzzer):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     tests/fuzz/fuzz_netcdf.cc src/schema/netcdf_classic.cc src/store/container/variable_map.cc \
//     src/common/json_text.cc \
//     -o /tmp/fuzz_netcdf
//   mkdir -p /tmp/fuzz_netcdf_corpus && /tmp/fuzz_netcdf /tmp/fuzz_netcdf_corpus \
//     tests/fuzz/seeds/netcdf -max_total_time=60
// Seeds: tests/fuzz/seeds/netcdf/ (small files written by ncgen -k classic, 64-bit offset
// and cdf5 from one CDL with fixed, record, scalar and CDF-5-only variables; a streaming
// copy; inputs that once failed).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "map_promises.h"
#include "schema/netcdf_classic.h"
#include "store/container/variable_map.h"

namespace {

void check(bool ok, const char* what, const std::string& detail) {
  ckptfwd::fuzz::promise(ok, "fuzz_netcdf", what, detail);
}

void exercise(const uint8_t* data, size_t size) {
  using namespace ckptfwd;
  VariableMap m;
  std::string why;
  if (!schema::infer_netcdf_classic(data, size, m, &why)) {
    check(!why.empty(), "rejected without a reason", "");
    return;
  }
  check(schema::is_netcdf_classic(data, size), "accepted without the magic", "");
  check(m.source == "netcdf", "source", m.source);
  ckptfwd::fuzz::check_map_promises(m, size, "fuzz_netcdf");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  exercise(data, size);
  if (size >= 4) {
    static const uint8_t versions[] = {1, 2, 5};
    std::vector<uint8_t> copy(data, data + size);
    copy[0] = 'C';
    copy[1] = 'D';
    copy[2] = 'F';
    copy[3] = versions[data[3] % 3];
    exercise(copy.data(), copy.size());
  }
  return 0;
}
