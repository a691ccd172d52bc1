// Decoding of kChain chunks: hostile input. The header is parsed and every step checked
// against the widths it implies before anything is allocated; all body lengths follow
// from the header (none is read from the body), the decoded body is bounded by a small
// multiple of raw_n, and the inverse steps write only within out[0, raw_n).
#include "codec/chain_decode.h"

#include <cstring>

#include "codec/entropy.h"
#include "codec/transforms.h"

namespace ckptfwd::codec::chain {
namespace {

bool is_int_width(uint32_t w) { return w == 1 || w == 2 || w == 4 || w == 8; }
bool is_predictor(Step s) {
  return s == Step::kDelta || s == Step::kXor || s == Step::kPrevRow || s == Step::kLorenzo;
}

// The widths before each step and the side bytes of each; false for an impossible chain.
bool plan_widths(const ChunkHeader& h, uint64_t m, std::vector<uint32_t>& width_in,
                 std::vector<uint64_t>& side_bytes, uint32_t* final_width) {
  uint32_t w = h.dtype.elem;
  const bool is_float = h.dtype.kind == DtypeKind::kFloat;
  for (const StepRecord& r : h.steps) {
    width_in.push_back(w);
    uint64_t side = 0;
    switch (r.spec.kind) {
      case Step::kSwap:
        if (w != h.dtype.elem || (w != 2 && w != 4 && w != 8) || r.spec.param) return false;
        break;
      case Step::kFixed:
      case Step::kQuant:
        if (!is_float || w != h.dtype.elem) return false;
        [[fallthrough]];
      case Step::kDict:
        if (!side_size(r, m, w, &side)) return false;
        w = r.width;
        break;
      case Step::kShuffle:
      case Step::kByteDelta:
        if (r.spec.param) return false;
        break;
      default:
        if (!is_predictor(r.spec.kind) || !is_int_width(w) || r.spec.param > 1) return false;
        if (r.spec.kind == Step::kXor && r.spec.param) return false;
    }
    side_bytes.push_back(side);
  }
  *final_width = w;
  return true;
}

bool invert(const StepRecord& r, const uint8_t* in, const uint8_t* side, uint8_t* out, uint64_t m,
            uint32_t w, uint64_t row) {
  switch (r.spec.kind) {
    case Step::kSwap:
      swap_bytes(in, out, m, w);
      return true;
    case Step::kFixed:
      return fixed_decode(r, in, side, out, m, w);
    case Step::kQuant:
      return quant_decode(r, in, side, out, m, w);
    case Step::kDict:
      return dict_decode(r, in, side, out, m, w);
    case Step::kShuffle:
      unshuffle(in, out, m, w);
      return true;
    case Step::kByteDelta:
      byte_undelta(in, out, m * w);
      return true;
    default:
      unpredict(r.spec.kind, r.spec.param == 1, in, out, m, w, row);
      return true;
  }
}

}  // namespace

bool decode_chunk(const uint8_t* in, size_t n, uint8_t* out, size_t raw_n) {
  ChunkHeader h;
  size_t body_at = 0;
  if (!in || !parse_header(in, n, h, &body_at) || h.raw_size != raw_n) return false;
  if (raw_n > (uint64_t(1) << 56)) return false;  // keeps every size product below 2^64
  const uint32_t elem = h.dtype.elem;
  const uint64_t m = raw_n / elem, tail = raw_n % elem;
  const uint64_t row = h.inner.empty() ? 0 : h.inner.back();
  std::vector<uint32_t> width_in;
  std::vector<uint64_t> side_bytes;
  uint32_t w = elem;
  if (!plan_widths(h, m, width_in, side_bytes, &w)) return false;
  uint64_t main = m * w, total = main + tail;
  for (uint64_t s : side_bytes) total += s;
  // The encoder never emits more than this (chain_encode.cc drops steps with too many
  // exceptions); more is corruption, refused before any allocation.
  if (total > 4 * raw_n + 64) return false;

  const uint8_t* body = in + body_at;
  const size_t body_n = n - body_at;
  thread_local std::vector<uint8_t> decoded, scratch_a, scratch_b;
  if (h.entropy == Entropy::kFpzip) {
    if (!h.steps.empty() && !(h.steps.size() == 1 && h.steps[0].spec.kind == Step::kSwap))
      return false;
    if (h.dtype.kind != DtypeKind::kFloat || (elem != 4 && elem != 8)) return false;
    if (decoded.size() < main) decoded.resize(main);
    size_t used = 0;
    if (!fpzip_decode(body, body_n, decoded.data(), m, elem, h.inner, &used)) return false;
    if (body_n - used != tail) return false;
    if (tail) memcpy(out + m * elem, body + used, tail);
  } else {
    if (decoded.size() < total) decoded.resize(total);
    if (!entropy_decode(h.entropy, body, body_n, decoded.data(), total)) return false;
    if (tail) memcpy(out + m * elem, decoded.data() + total - tail, tail);
  }

  // Inverse steps, last first; the first step writes straight into out.
  std::vector<uint64_t> side_at(h.steps.size());
  uint64_t at = main;
  for (size_t i = 0; i < h.steps.size(); ++i) {
    side_at[i] = at;
    at += side_bytes[i];
  }
  // A predictor right after the byte order step writes swapped values straight into out.
  const bool fuse_swap = h.steps.size() >= 2 && h.steps[0].spec.kind == Step::kSwap &&
                         is_predictor(h.steps[1].spec.kind);
  const uint8_t* src = decoded.data();
  for (size_t k = h.steps.size(); k-- > 0;) {
    if (fuse_swap && k == 1) {
      const StepRecord& r = h.steps[1];
      unpredict(r.spec.kind, r.spec.param == 1, src, out, m, width_in[1], row, true);
      break;
    }
    uint8_t* dst;
    if (k == 0) {
      dst = out;
    } else {
      std::vector<uint8_t>& buf = src == scratch_a.data() ? scratch_b : scratch_a;
      if (buf.size() < m * width_in[k]) buf.resize(m * width_in[k]);
      dst = buf.data();
    }
    if (!invert(h.steps[k], src, decoded.data() + side_at[k], dst, m, width_in[k], row))
      return false;
    src = dst;
  }
  if (h.steps.empty() && main) memcpy(out, decoded.data(), main);
  return true;
}

std::string describe_chunk(const uint8_t* in, size_t n) {
  ChunkHeader h;
  size_t body_at = 0;
  if (!in || !parse_header(in, n, h, &body_at)) return "";
  Plan p;
  for (const StepRecord& r : h.steps) p.steps.push_back(r.spec);
  p.entropy = h.entropy;
  p.level = h.level;
  return plan_name(p);
}

}  // namespace ckptfwd::codec::chain
