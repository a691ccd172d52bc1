// Registry: the id stored in every chunk selects the codec that decodes it.
#include "codec/codec.h"

#include "codec/codecs_builtin.h"

namespace ckptfwd {

namespace {
const Codec* const* all_codecs() {
  static const Codec* const table[] = {&codec_detail::raw_codec(), &codec_detail::zstd_codec(),
                                       &codec_detail::zlib_codec(), &codec_detail::chain_codec(),
                                       nullptr};
  return table;
}
}  // namespace

const Codec* codec_by_id(uint8_t id) {
  for (const Codec* const* c = all_codecs(); *c; ++c)
    if (static_cast<uint8_t>((*c)->id()) == id) return *c;
  return nullptr;
}

const Codec* codec_by_name(const std::string& name) {
  for (const Codec* const* c = all_codecs(); *c; ++c)
    if (name == (*c)->name()) return *c;
  return nullptr;
}

}  // namespace ckptfwd
