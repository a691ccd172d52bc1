// The .nc form of `ckptfwd export`: netCDF classic, CDF-5 (64-bit data: every integer type,
// 64-bit sizes and offsets), written directly, no netCDF library. netCDF >= 4.4 (ncdump,
// netCDF4-python, xarray) and PnetCDF read it. Layout as the netCDF classic format
// specification gives it: "CDF\5", numrecs 0, the dimensions, the global attributes, the
// variables (each: name, dimension ids, attributes, type, vsize, begin), then each
// variable's elements big-endian at its begin, padded to 4 bytes. No record variables.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/json_text.h"

namespace ckptfwd::cli {

struct NcVar {
  std::string name;               // made a netCDF name: other than [A-Za-z0-9_.+-] -> '_'
  std::string dtype;              // a numeric dtype name of base/dtype.h (either byte order)
  std::vector<uint64_t> shape;    // dimensions <name>_d0, <name>_d1, ...
  const uint8_t* data = nullptr;  // the elements, C order, in dtype's byte order
  Json attrs;                     // string, integer, number, boolean, arrays of these
};

// A netCDF name for s: characters other than letters, digits, '_', '.', '+', '-' become
// '_', and a name not led by a letter or '_' gets a leading '_'.
std::string nc_name(const std::string& s);

// Writes vars to out (a temporary file beside it, renamed over it once complete). False
// with *err: a dtype netCDF has no type for (CHAR, STR<n>, compounds), or a write failure.
bool write_nc(const std::string& out, const std::vector<NcVar>& vars, std::string* err);

}  // namespace ckptfwd::cli
