#include "forwarder/group/messages.h"

#include "base/le_codec.h"

namespace ckptfwd::fwd::group {

std::string encode_records(const RecordFields& records) {
  LeEncoder e;
  for (const std::vector<std::string>& r : records) {
    e.u32(static_cast<uint32_t>(r.size()));
    for (const std::string& f : r) e.str(f);
  }
  return std::string(e.buf.begin(), e.buf.end());
}

bool decode_records(const std::string& body, uint64_t n, RecordFields& out) {
  out.clear();
  LeDecoder d(reinterpret_cast<const uint8_t*>(body.data()), body.size());
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t k = d.u32();
    // Each field takes at least its 4-byte length: a count the body cannot hold is refused
    // before anything is reserved for it.
    if (!d.ok() || k > kMaxRecordFields || k > d.left() / 4) return false;
    std::vector<std::string> r;
    for (uint32_t j = 0; j < k; ++j) r.push_back(d.str());
    if (!d.ok()) return false;
    out.push_back(std::move(r));
  }
  return d.ok() && d.left() == 0;
}

std::string encode_extents(const ExtentPairs& extents) {
  LeEncoder e;
  for (const auto& [b, end] : extents) {
    e.u64(b);
    e.u64(end);
  }
  return std::string(e.buf.begin(), e.buf.end());
}

bool decode_extents(const std::string& body, uint64_t n, uint64_t max_end, ExtentPairs& out,
                    uint64_t* bytes) {
  out.clear();
  *bytes = 0;
  if (n > body.size() / 16) return false;
  LeDecoder d(reinterpret_cast<const uint8_t*>(body.data()), body.size());
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t b = d.u64(), e = d.u64();
    if (!d.ok() || e <= b || e > max_end) return false;
    *bytes += e - b;
    out.emplace_back(b, e);
  }
  return true;
}

}  // namespace ckptfwd::fwd::group
