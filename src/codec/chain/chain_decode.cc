// Decoding of kChain chunks: hostile input. The header is parsed and every step checked
// against the widths it implies before anything is allocated; all body lengths follow
// from the header (none is read from the body), the decoded body is bounded by a small
// multiple of raw_n, and the inverse steps write only within out[0, raw_n).
#include "codec/chain/chain_decode.h"

#include <algorithm>
#include <cstring>

#include "base/uninit_bytes.h"
#include "codec/chain/entropy.h"
#include "codec/chain/exceptions.h"
#include "codec/chain/transforms.h"

namespace ckptfwd::codec::chain {
namespace {

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
      case Step::kColumns:
        if (r.spec.param || w != h.dtype.elem) return false;
        break;
      case Step::kRecords:
        if (r.spec.param || w != h.dtype.elem || r.width != w || (w != 4 && w != 8)) return false;
        break;
      case Step::kWavelet:
        if (!is_int_width(w) || r.spec.param < 1 || r.spec.param > kMaxWaveletLevels) return false;
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
            uint32_t w, uint64_t row, uint64_t plane, DtypeKind kind) {
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
    case Step::kColumns:
      from_columns(in, out, m, w, row);
      return true;
    case Step::kRecords:
      return from_records(in, out, m, w, kind, r.head, r.count);
    case Step::kWavelet:
      wavelet_inverse(in, out, m, w, row, r.spec.param);
      return true;
    default:
      unpredict(r.spec.kind, r.spec.param == 1, in, out, m, w, row, false, plane);
      return true;
  }
}

// The common chains, [native] [fixed | dict] [predictor] [shuffle] + entropy, inverted in
// one pass over blocks of elements that stay in cache (unshuffle, predictor, fixed-point
// or dictionary, byte order), instead of one pass over the whole chunk per step.
struct Fused {
  bool swap = false;
  const StepRecord* rep = nullptr;   // kFixed or kDict
  const StepRecord* pred = nullptr;  // a predictor
  bool shuffle = false;
  size_t rep_index = 0;
};

bool match_fused(const ChunkHeader& h, Fused& f) {
  size_t k = 0;
  const auto& st = h.steps;
  if (k < st.size() && st[k].spec.kind == Step::kSwap) f.swap = true, ++k;
  if (k < st.size() && (st[k].spec.kind == Step::kFixed || st[k].spec.kind == Step::kDict))
    f.rep = &st[k], f.rep_index = k, ++k;
  if (k < st.size() && is_predictor(st[k].spec.kind)) f.pred = &st[k], ++k;
  if (k < st.size() && st[k].spec.kind == Step::kShuffle) f.shuffle = true, ++k;
  return k == st.size() && (f.rep || f.pred || f.shuffle);
}

// main: the entropy-decoded main stream (m elements of width ws), side: where the
// representation step's side data starts. Writes out[0, m * elem).
bool decode_fused(const ChunkHeader& h, const Fused& f, const uint8_t* main, const uint8_t* side,
                  uint8_t* out, uint64_t m, uint32_t ws, uint64_t row_in, uint64_t plane) {
  const uint32_t elem = h.dtype.elem;
  const bool swap = f.swap;
  const uint64_t row = predictor_row(row_in, m);
  const bool two_d =
      f.pred && (f.pred->spec.kind == Step::kPrevRow || f.pred->spec.kind == Step::kLorenzo ||
                 f.pred->spec.kind == Step::kLorenzo3);
  const bool three_d = f.pred && f.pred->spec.kind == Step::kLorenzo3 && plane;
  // How far back the predictor looks, and where its values go: straight into out when
  // nothing follows it, else a window holding the history and one block (or a whole-chunk
  // buffer when rows are too long for a window to pay).
  const uint64_t history = three_d ? plane + row + 1 : two_d ? row + 1 : 1;
  const bool pred_to_out = f.pred && !f.rep && !swap;
  const bool window = f.pred && !pred_to_out && history <= (64u << 10) / ws;
  uint64_t block = std::max<uint64_t>((32u << 10) / ws, 4 * history);
  if (!f.pred || pred_to_out || !window) block = std::max<uint64_t>(1, (32u << 10) / ws);
  thread_local std::vector<uint8_t> resid, values;
  if (f.shuffle && resid.size() < block * ws) resid.resize(block * ws);
  if (f.pred && !pred_to_out) {
    const uint64_t slots = window ? history + block : m;
    if (values.size() < slots * ws) values.resize(slots * ws);
  }
  uint64_t kept = 0;  // window: elements of history before the block's first slot
  for (uint64_t i0 = 0; i0 < m; i0 += block) {
    const uint64_t n = std::min(block, m - i0);
    const uint8_t* r = main + i0 * ws;
    if (f.shuffle && !f.pred && !f.rep && !swap) {  // shuffle alone: straight into out
      unshuffle_range(main, out + i0 * elem, m, ws, i0, n);
      continue;
    }
    if (f.shuffle) {
      unshuffle_range(main, resid.data(), m, ws, i0, n);
      r = resid.data();
    }
    const uint8_t* v = r;  // the block's values in the representation's width
    if (f.pred) {
      uint8_t* x = pred_to_out ? out + i0 * ws
                   : window    ? values.data() + history * ws
                               : values.data() + i0 * ws;
      unpredict_range(f.pred->spec.kind, f.pred->spec.param == 1, r, x, i0, n, ws, row, plane);
      v = x;
      if (window) {  // the last history elements move in front of the next block's slot
        const uint64_t keep = std::min(history, kept + n);
        memmove(values.data() + (history - keep) * ws, (x + n * ws) - keep * ws, keep * ws);
        kept = keep;
      }
    }
    uint8_t* o = out + i0 * elem;
    if (f.rep && f.rep->spec.kind == Step::kFixed) {
      fixed_decode_range(*f.rep, v, o, n, elem, swap);
    } else if (f.rep) {
      if (!dict_decode(*f.rep, v, side, o, n, elem, swap)) return false;
    } else if (swap) {
      swap_bytes(v, o, n, elem);
    } else if (v != o) {
      memcpy(o, v, n * elem);
    }
  }
  if (f.rep && f.rep->spec.kind == Step::kFixed)
    return patch_exceptions(side, f.rep->count, out, m, elem, swap);
  return true;
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
  const uint64_t plane = predictor_plane(h.inner, predictor_row(row, m), m);
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
  // Written whole before they are read (entropy_decode fills exactly `total` bytes or
  // fails, each inverse step all of its output): grown without a zero fill, which on a
  // restore's helper threads (new for each file) was a pass over fresh memory per chunk.
  thread_local UninitBytes decoded, scratch_a, scratch_b;
  if (h.entropy == Entropy::kFpzip) {
    if (!h.steps.empty() && !(h.steps.size() == 1 && h.steps[0].spec.kind == Step::kSwap))
      return false;
    if (h.dtype.kind != DtypeKind::kFloat || (elem != 4 && elem != 8)) return false;
    if (decoded.size() < main) decoded.resize(main);
    size_t used = 0;
    if (!fpzip_decode(body, body_n, decoded.data(), m, elem, h.inner, &used)) return false;
    if (body_n - used != tail) return false;
    if (tail) memcpy(out + m * elem, body + used, tail);
  } else if (h.steps.empty()) {
    // No steps: the body is the chunk's bytes (main stream, then the tail).
    return entropy_decode(h.entropy, body, body_n, out, raw_n);
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
  Fused f;
  if (h.entropy != Entropy::kFpzip && match_fused(h, f))
    return decode_fused(h, f, decoded.data(), decoded.data() + side_at[f.rep_index], out, m, w, row,
                        plane);
  // A predictor right after the byte order step writes swapped values straight into out.
  const bool fuse_swap = h.steps.size() >= 2 && h.steps[0].spec.kind == Step::kSwap &&
                         is_predictor(h.steps[1].spec.kind);
  const uint8_t* src = decoded.data();
  for (size_t k = h.steps.size(); k-- > 0;) {
    if (fuse_swap && k == 1) {
      const StepRecord& r = h.steps[1];
      unpredict(r.spec.kind, r.spec.param == 1, src, out, m, width_in[1], row, true, plane);
      break;
    }
    uint8_t* dst;
    if (k == 0) {
      dst = out;
    } else {
      UninitBytes& buf = src == scratch_a.data() ? scratch_b : scratch_a;
      if (buf.size() < m * width_in[k]) buf.resize(m * width_in[k]);
      dst = buf.data();
    }
    if (!invert(h.steps[k], src, decoded.data() + side_at[k], dst, m, width_in[k], row, plane,
                h.dtype.kind))
      return false;
    src = dst;
  }
  if (h.steps.empty() && main) memcpy(out, decoded.data(), main);
  return true;
}

bool quant_record(const uint8_t* in, size_t n, StepRecord* out) {
  ChunkHeader h;
  size_t body_at = 0;
  if (!in || !parse_header(in, n, h, &body_at)) return false;
  for (const StepRecord& r : h.steps)
    if (r.spec.kind == Step::kQuant) {
      *out = r;
      return true;
    }
  return false;
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
