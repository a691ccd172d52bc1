// The kChain codec: chunks encoded by typed.h's encode(), self-describing. compress() (the
// plain Codec interface, with no type known) encodes with bytes_chain(level).
#include "codec/chain/chain_decode.h"
#include "codec/chain/transforms.h"
#include "codec/chain/typed.h"
#include "codec/codecs_builtin.h"

namespace ckptfwd {
namespace codec {

std::string describe_payload(const uint8_t* p, size_t n) { return chain::describe_chunk(p, n); }

bool lossy_payload(const uint8_t* p, size_t n, LossyRecord* out) {
  chain::StepRecord r;
  if (!chain::quant_record(p, n, &r)) return false;
  out->relative = r.spec.param != 0;
  out->bound = chain::quant_bound(r);
  out->max_err = r.max_err;
  return true;
}

}  // namespace codec

namespace codec_detail {
namespace {

class ChainCodec final : public Codec {
 public:
  CodecId id() const override { return CodecId::kChain; }
  const char* name() const override { return "chain"; }

  bool compress(const uint8_t* in, size_t n, int level, std::vector<uint8_t>& out) const override {
    return codec::encode(codec::bytes_chain(level), codec::Layout{}, in, n, out);
  }

  bool decompress(const uint8_t* in, size_t n, uint8_t* out, size_t raw_n) const override {
    return codec::chain::decode_chunk(in, n, out, raw_n);
  }
};

}  // namespace

const Codec& chain_codec() {
  static const ChainCodec c;
  return c;
}

}  // namespace codec_detail
}  // namespace ckptfwd
