// The built-in codecs, one class per file; codec.cc looks them up by id and name.
// Internal to src/codec (users go through codec_by_id / codec_by_name).
#pragma once
#include "codec/codec.h"

namespace ckptfwd::codec_detail {

const Codec& raw_codec();
const Codec& zstd_codec();
const Codec& zlib_codec();
const Codec& chain_codec();  // typed chains (typed.h), chain_codec.cc

}  // namespace ckptfwd::codec_detail
