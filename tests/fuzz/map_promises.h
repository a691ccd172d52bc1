// The promises every structure-inference parser makes about the variable map it returns,
// checked by the fuzz targets of those parsers (fuzz_netcdf, fuzz_lammps, fuzz_openfoam):
// the map passes check_variable_map, every extent lies inside the input, extents and
// residual cover the input exactly once, and its JSON can be made. A broken promise
// prints what and aborts, so libFuzzer keeps the input.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/json_text.h"
#include "store/container/variable_map.h"

namespace ckptfwd::fuzz {

// Aborts with "<target>: <what>: <detail>" unless ok.
inline void promise(bool ok, const char* target, const char* what, const std::string& detail) {
  if (ok) return;
  fprintf(stderr, "%s: %s: %s\n", target, what, detail.c_str());
  abort();
}

// The checks above on map m of an input of size bytes.
inline void check_map_promises(const VariableMap& m, uint64_t size, const char* target) {
  std::string bad = check_variable_map(m, size);
  promise(bad.empty(), target, "check_variable_map", bad);
  uint64_t covered = 0;
  for (const Variable& v : m.vars)
    for (const VarExtent& e : v.extents) {
      promise(e.len > 0 && e.file_off <= size && e.len <= size - e.file_off, target,
              "extent outside", v.name + " at " + std::to_string(e.file_off));
      covered += e.len;
    }
  // Extents do not overlap (checked above), so with the residual they cover each byte once.
  for (const auto& [b, e] : residual_ranges(m, size)) {
    promise(b < e && e <= size, target, "residual range",
            std::to_string(b) + ".." + std::to_string(e));
    covered += e - b;
  }
  promise(covered == size, target, "extents and residual do not cover the input",
          std::to_string(covered) + " of " + std::to_string(size));
  promise(!variable_map_json(m, size).empty(), target, "json", "");
}

}  // namespace ckptfwd::fuzz
