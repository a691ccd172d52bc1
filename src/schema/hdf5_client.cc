// Placeholder until the HDF5 helper lands.
#include "schema/hdf5_client.h"

#include <cstring>

namespace ckptfwd::schema {
int64_t hdf5_superblock_offset(const uint8_t* d, uint64_t n) {
  static const uint8_t sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  for (uint64_t off = 0; off + 8 <= n; off = off ? off * 2 : 512)
    if (memcmp(d + off, sig, 8) == 0) return static_cast<int64_t>(off);
  return -1;
}
std::string default_hdf5_helper() { return ""; }
bool infer_hdf5(const std::string&, const std::string&, uint64_t, int, VariableMap&, std::string* why) {
  if (why) *why = "HDF5 helper not built yet";
  return false;
}
}  // namespace ckptfwd::schema
