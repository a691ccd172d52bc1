// libFuzzer target: arbitrary bytes as a chunk of every codec id (raw, zstd, zlib, kChain).
// decompress must return false or fill exactly raw_n bytes, never write past them (the
// output buffer is exactly raw_n long, so ASan sees any overrun) and never crash. The
// first two input bytes choose raw_n (0..65535), the rest is the chunk. A kChain chunk
// that decodes is re-encoded with its own chain name's plain zstd and decoded again.
//
// Standalone build (from the repository root; needs clang with libFuzzer):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     tests/fuzz/fuzz_codec.cc src/codec/*.cc -lzstd -lz -lfpzip -o /tmp/fuzz_codec
//   mkdir -p /tmp/fuzz_codec_corpus && /tmp/fuzz_codec /tmp/fuzz_codec_corpus \
//     tests/fuzz/seeds/codec -max_total_time=60 -rss_limit_mb=2048
// Seeds: tests/fuzz/seeds/codec/ (kChain chunks of each transform, made by the encoder with
// a 2-byte raw size prefix; see the seed writer in tests/unit/core_typed_codec_test.cc).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "codec/chain/typed.h"
#include "codec/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t raw_n = size_t(data[0]) | size_t(data[1]) << 8;
  const uint8_t* chunk = data + 2;
  const size_t n = size - 2;
  // A copy of exactly n bytes, so reads past the chunk are caught too.
  std::vector<uint8_t> in(chunk, chunk + n);
  for (uint8_t id = 0; id < 8; ++id) {
    const ckptfwd::Codec* c = ckptfwd::codec_by_id(id);
    if (!c) continue;
    std::vector<uint8_t> out(raw_n);
    bool ok = c->decompress(in.empty() ? nullptr : in.data(), n, out.data(), raw_n);
    if (ok && id == static_cast<uint8_t>(ckptfwd::CodecId::kChain)) {
      // What decoded must have a name and survive a plain re-encode.
      if (ckptfwd::codec::describe_payload(in.data(), n).empty()) abort();
      std::vector<uint8_t> again, back(raw_n);
      if (!ckptfwd::codec::encode(ckptfwd::codec::bytes_chain(1), ckptfwd::codec::Layout{},
                                  out.data(), raw_n, again))
        abort();
      if (!c->decompress(again.data(), again.size(), back.data(), raw_n) || back != out) abort();
    }
  }
  return 0;
}
