// encode(): runs a chain's steps over a chunk and writes the kChain header and body.
// Steps that do not apply to a chunk are left out of its header (a dictionary that
// overflows, fixed-point or quantization with too many exceptions, a predictor on a width
// it has no integer type for), so the header always says what was done.
#include <algorithm>
#include <cstring>
#include <utility>

#include "codec/chain_format.h"
#include "codec/entropy.h"
#include "codec/transforms.h"
#include "codec/typed.h"

namespace ckptfwd::codec {
namespace {

using namespace chain;

bool fail(std::string* err, const std::string& what) {
  if (err) *err = what;
  return false;
}

bool is_int_width(uint32_t w) { return w == 1 || w == 2 || w == 4 || w == 8; }
bool is_predictor(Step s) {
  return s == Step::kDelta || s == Step::kXor || s == Step::kPrevRow || s == Step::kLorenzo;
}

// Exceptions beyond a quarter of the values: the step costs more than it saves, and the
// decoder's bound on the body size (chain_decode.cc) assumes no more.
bool too_many_exceptions(const StepRecord& r, uint64_t m) { return r.count > m / 4; }

// steps, then zstd at level (clamped to zstd's range as the chain format stores it).
Chain zstd_chain(std::vector<StepSpec> steps, int zstd_level) {
  Plan p;
  p.steps = std::move(steps);
  p.entropy = Entropy::kZstd;
  p.level = static_cast<int8_t>(std::clamp(zstd_level, -7, 19));
  Chain c;
  c.spec = serialize_plan(p);
  c.name = plan_name(p);
  return c;
}

}  // namespace

Chain bytes_chain(int zstd_level) { return zstd_chain({}, zstd_level); }

Chain shuffle_chain(const Layout& layout, int zstd_level) {
  if (parse_dtype(layout.dtype).elem < 2) return bytes_chain(zstd_level);
  return zstd_chain({{Step::kShuffle}}, zstd_level);
}

bool encode(const Chain& chain, const Layout& layout, const uint8_t* in, size_t n,
            std::vector<uint8_t>& out, std::string* err) {
  Plan plan;
  if (!parse_plan(chain.spec, plan)) return fail(err, "malformed chain spec");
  ChunkHeader h;
  h.dtype = parse_dtype(layout.dtype);
  h.inner = layout.inner;
  if (h.inner.size() > kMaxInner) h.inner.clear();
  h.raw_size = n;
  h.entropy = plan.entropy;
  h.level = plan.level;
  const uint32_t elem = h.dtype.elem;
  const uint64_t m = n / elem;
  const uint64_t row = h.inner.empty() ? 0 : h.inner.back();
  const bool is_float = h.dtype.kind == DtypeKind::kFloat;

  // Two scratch buffers per thread, swapped after each step; reused across chunks.
  thread_local std::vector<uint8_t> buf_a, buf_b, side;
  const size_t cap = m * std::max<uint32_t>(elem, 8) + n % elem + 64;
  if (buf_a.size() < cap) buf_a.resize(cap);
  if (buf_b.size() < cap) buf_b.resize(cap);
  side.clear();
  const uint8_t* src = in;
  std::vector<uint8_t>* dst = &buf_a;
  uint32_t w = elem;
  auto advance = [&]() {
    src = dst->data();
    dst = dst == &buf_a ? &buf_b : &buf_a;
  };

  // Fixed-point, quantization and the float order of dictionaries need the values
  // themselves: only a byte order step may come before them.
  bool values_intact = true;
  for (const StepSpec& s : plan.steps) {
    StepRecord rec;
    rec.spec = s;
    size_t side_before = side.size();
    switch (s.kind) {
      case Step::kSwap:
        if (!h.dtype.big_endian || !values_intact || (w != 2 && w != 4 && w != 8)) continue;
        swap_bytes(src, dst->data(), m, w);
        break;
      case Step::kFixed:
        if (!is_float || !values_intact) continue;
        fixed_encode(s.param, src, dst->data(), m, w, rec, side);
        if (too_many_exceptions(rec, m)) {
          side.resize(side_before);
          continue;
        }
        break;
      case Step::kQuant: {
        if (!chain.lossy) return fail(err, "lossy step in a chain without a LossyBound");
        const LossyBound& b = *chain.lossy;
        if (!is_float || !values_intact || !(b.abs > 0 || b.rel > 0)) continue;
        uint8_t mode = b.abs > 0 ? 0 : 1;
        quant_encode(mode, b.abs, b.rel, src, dst->data(), m, w, rec, side);
        if (too_many_exceptions(rec, m)) {
          side.resize(side_before);
          continue;
        }
        break;
      }
      case Step::kDict:
        if (!is_int_width(w)) continue;
        if (!dict_encode(src, dst->data(), m, w, is_float && values_intact, rec, side)) {
          side.resize(side_before);
          continue;
        }
        break;
      case Step::kShuffle:
        if (w < 2) continue;
        shuffle(src, dst->data(), m, w);
        break;
      case Step::kByteDelta:
        byte_delta(src, dst->data(), m * w);
        break;
      default:
        if (!is_predictor(s.kind) || !is_int_width(w)) continue;
        predict(s.kind, s.param == 1, src, dst->data(), m, w, row);
        rec.spec.param = s.param == 1 ? 1 : 0;
        break;
    }
    if (rec.width) w = rec.width;
    values_intact = values_intact && s.kind == Step::kSwap;
    h.steps.push_back(rec);
    advance();
  }

  const size_t out_start = out.size();
  if (h.entropy == Entropy::kFpzip) {
    // fpzip codes floats only; for anything else, when it is not trusted (typed.h) or if it
    // fails, the chunk gets zstd -3.
    bool only_native = std::all_of(h.steps.begin(), h.steps.end(),
                                   [](const StepRecord& r) { return r.spec.kind == Step::kSwap; });
    if (is_float && w == elem && only_native) {
      write_header(h, out);
      if (fpzip_encode(src, m, w, h.inner, out)) {
        out.insert(out.end(), in + m * elem, in + n);  // the tail, verbatim
        return true;
      }
      out.resize(out_start);
    }
    h.entropy = Entropy::kZstd;
    h.level = 3;
  }
  write_header(h, out);
  // Body: main stream, side data, tail, in one buffer for the entropy stage.
  const size_t main = m * w, tail = n - m * elem;
  std::vector<uint8_t>& body = *dst;
  if (body.size() < main + side.size() + tail) body.resize(main + side.size() + tail);
  if (main) memmove(body.data(), src, main);
  if (!side.empty()) memcpy(body.data() + main, side.data(), side.size());
  if (tail) memcpy(body.data() + main + side.size(), in + m * elem, tail);
  if (!entropy_encode(h.entropy, h.level, body.data(), main + side.size() + tail, out)) {
    out.resize(out_start);
    return fail(err, "entropy stage failed");
  }
  return true;
}

}  // namespace ckptfwd::codec
