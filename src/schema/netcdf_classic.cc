// Placeholder until the parser lands.
#include "schema/netcdf_classic.h"

namespace ckptfwd::schema {
bool is_netcdf_classic(const uint8_t* d, uint64_t n) {
  return n >= 4 && d[0] == 'C' && d[1] == 'D' && d[2] == 'F' && (d[3] == 1 || d[3] == 2 || d[3] == 5);
}
bool infer_netcdf_classic(const uint8_t*, uint64_t, VariableMap&, std::string* why) {
  if (why) *why = "netCDF classic parser not built yet";
  return false;
}
}  // namespace ckptfwd::schema
