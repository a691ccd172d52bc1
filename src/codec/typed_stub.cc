// TEMPORARY until the typed codec chains land: no chain encodes, so every typed stream
// falls back to its byte codec.
#include "codec/typed.h"

namespace ckptfwd::codec {
Chain bytes_chain(int zstd_level) {
  Chain c;
  c.name = "zstd-" + std::to_string(zstd_level);
  return c;
}
Chain select_chain(const Layout&, const uint8_t*, size_t, const SelectOptions&) {
  return bytes_chain(3);
}
bool encode(const Chain&, const Layout&, const uint8_t*, size_t, std::vector<uint8_t>&,
            std::string* err) {
  if (err) *err = "typed codecs not built";
  return false;
}
std::string describe_payload(const uint8_t*, size_t) { return ""; }
}  // namespace ckptfwd::codec
