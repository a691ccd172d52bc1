// Encoding of reference chunks (layout in chunk_ref.h).
#include "store/container/chunk_ref.h"

#include "base/le_codec.h"
#include "codec/codec.h"
#include "store/container/content_hash.h"

namespace ckptfwd {

namespace {
constexpr uint8_t kRefVersion = 1;
}  // namespace

std::string bad_ref_container_name(const std::string& name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxRefNameBytes) return "is too long";
  if (name == "." || name == "..") return "is not a file name";
  if (name.find('/') != std::string::npos) return "is a path, not a file name in the store";
  if (name.find('\0') != std::string::npos) return "holds a NUL byte";
  if (name.size() < 5 || name.compare(name.size() - 4, 4, ".ckc") != 0)
    return "does not end in .ckc";
  return "";
}

std::vector<uint8_t> encode_chunk_ref(const ChunkRef& r) {
  LeEncoder e;
  e.u8(kRefVersion);
  e.str(r.container);
  e.u64(r.id.size);
  e.u64(r.id.index_hash);
  e.str(r.stream_key);
  e.u32(r.stream);
  e.u32(r.chunk);
  return std::move(e.buf);
}

bool decode_chunk_ref(const uint8_t* p, size_t n, ChunkRef& out, std::string* err) {
  auto fail = [&](const std::string& why) {
    if (err) *err = "bad reference: " + why;
    return false;
  };
  if (n > kMaxChunkRefBytes) return fail("too long (" + std::to_string(n) + " bytes)");
  LeDecoder d(p, n);
  uint8_t version = d.u8();
  if (d.ok() && version != kRefVersion) return fail("unknown version " + std::to_string(version));
  out.container = d.str();
  out.id.size = d.u64();
  out.id.index_hash = d.u64();
  out.stream_key = d.str();
  out.stream = d.u32();
  out.chunk = d.u32();
  if (!d.ok()) return fail("truncated");
  if (d.left() != 0) return fail("trailing bytes");
  std::string why = bad_ref_container_name(out.container);
  if (!why.empty()) return fail("container name '" + out.container + "' " + why);
  if (!out.id.known()) return fail("no identity for container " + out.container);
  if (out.stream_key.size() > kMaxRefKeyBytes) return fail("stream key too long");
  return true;
}

EncodedChunk make_ref_chunk(const ChunkRef& r, uint32_t raw_size, uint64_t raw_hash) {
  EncodedChunk c;
  c.codec = static_cast<uint8_t>(CodecId::kRef);
  c.raw_size = raw_size;
  c.raw_hash = raw_hash;
  c.bytes = encode_chunk_ref(r);
  c.comp_hash = content_hash(c.bytes.data(), c.bytes.size());
  return c;
}

}  // namespace ckptfwd
