// encode(): runs a chain's steps over a chunk and writes the kChain header and body.
// Steps that do not apply to a chunk are left out of its header (a dictionary that
// overflows, fixed-point or quantization with too many exceptions, a predictor on a width
// it has no integer type for), so the header always says what was done.
#include <algorithm>
#include <cstring>
#include <utility>

#include "base/pause_point.h"
#include "codec/chain/chain_format.h"
#include "codec/chain/entropy.h"
#include "codec/chain/transforms.h"
#include "codec/chain/typed.h"

namespace ckptfwd::codec {
namespace {

using namespace chain;

bool fail(std::string* err, const std::string& what) {
  if (err) *err = what;
  return false;
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

// One encode() of a chunk: run_steps() applies the plan's steps between the two scratch
// buffers, recording in the header those that applied; write() appends the header and
// the entropy-coded body.
class ChunkEncoder {
 public:
  ChunkEncoder(const Chain& chain, const Plan& plan, const Layout& layout, const uint8_t* in,
               size_t n, std::vector<uint8_t>& buf_a, std::vector<uint8_t>& buf_b,
               std::vector<uint8_t>& side)
      : chain_(chain), plan_(plan), in_(in), n_(n), buf_a_(buf_a), buf_b_(buf_b), side_(side) {
    h_.dtype = parse_dtype(layout.dtype);
    h_.inner = layout.inner;
    if (h_.inner.size() > kMaxInner) h_.inner.clear();
    h_.raw_size = n;
    h_.entropy = plan.entropy;
    h_.level = plan.level;
    elem_ = h_.dtype.elem;
    m_ = n / elem_;
    row_ = h_.inner.empty() ? 0 : h_.inner.back();
    plane_ = chain::predictor_plane(h_.inner, chain::predictor_row(row_, m_), m_);
    is_float_ = h_.dtype.kind == DtypeKind::kFloat;
    w_ = elem_;
    // The steps write into the scratch buffers; a plan without steps codes the chunk
    // where it lies (write_body), so its buffers are neither grown nor touched.
    const size_t cap = m_ * std::max<uint32_t>(elem_, 8) + n % elem_ + 64;
    if (!plan.steps.empty() && buf_a_.size() < cap) buf_a_.resize(cap);
    if (!plan.steps.empty() && buf_b_.size() < cap) buf_b_.resize(cap);
    side_.clear();
  }

  bool run_steps(std::string* err);
  bool write(std::vector<uint8_t>& out, std::string* err);
  // The size write() would give a chunk of the whole stream's length (trial_size).
  size_t trial_size();

 private:
  enum class Applied { kYes, kSkipped, kError };
  // Step s from src_ into dst_ (its record in rec), or skipped where it does not apply.
  Applied apply(const StepSpec& s, StepRecord& rec, std::string* err);
  // kFixed or kQuant from src_ into dst_; skipped with too many exceptions.
  Applied apply_fixed(const StepSpec& s, StepRecord& rec);
  Applied apply_quant(StepRecord& rec, std::string* err);
  // The header and an fpzip body: true when the chunk (floats, only native order steps)
  // took it, else out as it was.
  bool write_fpzip(std::vector<uint8_t>& out);
  // The body: main stream, side data, tail, in one buffer for the entropy stage.
  bool write_body(std::vector<uint8_t>& out, size_t out_start, std::string* err);

  const Chain& chain_;
  const Plan& plan_;
  const uint8_t* in_;
  const size_t n_;
  std::vector<uint8_t>& buf_a_;
  std::vector<uint8_t>& buf_b_;
  std::vector<uint8_t>& side_;
  ChunkHeader h_;
  uint32_t elem_ = 0;
  uint64_t m_ = 0;      // elements
  uint64_t row_ = 0;    // the innermost extent, 0 when unknown
  uint64_t plane_ = 0;  // the two innermost extents' product for kLorenzo3, 0 when none
  bool is_float_ = false;
  const uint8_t* src_ = in_;             // the last step's output (the chunk before any)
  std::vector<uint8_t>* dst_ = &buf_a_;  // the next step's output
  uint32_t w_ = 0;                       // element width of src_
  // Fixed-point, quantization and the float order of dictionaries need the values
  // themselves: only a byte order step may come before them.
  bool values_intact_ = true;
  // A records step came before: its lengths must come back exactly, so no lossy step after.
  bool records_before_ = false;
};

bool ChunkEncoder::run_steps(std::string* err) {
  for (const StepSpec& s : plan_.steps) {
    pause_point();  // each step is a pass over the whole chunk (base/pause_point.h)
    StepRecord rec;
    rec.spec = s;
    Applied a = apply(s, rec, err);
    if (a == Applied::kError) return false;
    if (a == Applied::kSkipped) continue;
    if (rec.width) w_ = rec.width;
    records_before_ = records_before_ || s.kind == Step::kRecords;
    // A permutation of whole values keeps them for fixed-point and quantization after it.
    values_intact_ = values_intact_ && (s.kind == Step::kSwap || s.kind == Step::kColumns ||
                                        s.kind == Step::kRecords);
    h_.steps.push_back(rec);
    src_ = dst_->data();
    dst_ = dst_ == &buf_a_ ? &buf_b_ : &buf_a_;
  }
  return true;
}

ChunkEncoder::Applied ChunkEncoder::apply(const StepSpec& s, StepRecord& rec, std::string* err) {
  uint8_t* dst = dst_->data();
  switch (s.kind) {
    case Step::kSwap:
      if (!h_.dtype.big_endian || !values_intact_ || (w_ != 2 && w_ != 4 && w_ != 8))
        return Applied::kSkipped;
      swap_bytes(src_, dst, m_, w_);
      return Applied::kYes;
    case Step::kFixed:
      return apply_fixed(s, rec);
    case Step::kQuant:
      return apply_quant(rec, err);
    case Step::kDict: {
      if (!is_int_width(w_)) return Applied::kSkipped;
      size_t side_before = side_.size();
      if (!dict_encode(src_, dst, m_, w_, is_float_ && values_intact_, rec, side_)) {
        side_.resize(side_before);
        return Applied::kSkipped;
      }
      return Applied::kYes;
    }
    case Step::kShuffle:
      if (w_ < 2) return Applied::kSkipped;
      shuffle(src_, dst, m_, w_);
      return Applied::kYes;
    case Step::kByteDelta:
      byte_delta(src_, dst, m_ * w_);
      return Applied::kYes;
    case Step::kColumns:
      // Whole records only: the chunk holds rows of row_ elements of the dtype.
      if (w_ != elem_ || row_ < 2 || m_ / row_ < 2) return Applied::kSkipped;
      to_columns(src_, dst, m_, w_, row_);
      return Applied::kYes;
    case Step::kRecords:
      // The lengths are values: only a byte order step may come before (values_intact_).
      if (w_ != elem_ || !values_intact_ || (w_ != 4 && w_ != 8) ||
          !find_records(src_, m_, w_, h_.dtype.kind, &rec.head, &rec.count) ||
          !to_records(src_, dst, m_, w_, h_.dtype.kind, rec.head, rec.count))
        return Applied::kSkipped;
      rec.width = static_cast<uint8_t>(w_);
      return Applied::kYes;
    case Step::kWavelet:
      if (!is_int_width(w_) || s.param < 1 || s.param > kMaxWaveletLevels) return Applied::kSkipped;
      wavelet_forward(src_, dst, m_, w_, row_, s.param);
      return Applied::kYes;
    default:
      if (!is_predictor(s.kind) || !is_int_width(w_)) return Applied::kSkipped;
      predict(s.kind, s.param == 1, src_, dst, m_, w_, row_, plane_);
      rec.spec.param = s.param == 1 ? 1 : 0;
      return Applied::kYes;
  }
}

ChunkEncoder::Applied ChunkEncoder::apply_fixed(const StepSpec& s, StepRecord& rec) {
  if (!is_float_ || !values_intact_) return Applied::kSkipped;
  size_t side_before = side_.size();
  fixed_encode(s.param, src_, dst_->data(), m_, w_, rec, side_);
  if (too_many_exceptions(rec, m_)) {
    side_.resize(side_before);
    return Applied::kSkipped;
  }
  return Applied::kYes;
}

ChunkEncoder::Applied ChunkEncoder::apply_quant(StepRecord& rec, std::string* err) {
  if (!chain_.lossy) {
    fail(err, "lossy step in a chain without a LossyBound");
    return Applied::kError;
  }
  const LossyBound& b = *chain_.lossy;
  if (!is_float_ || !values_intact_ || records_before_ || !(b.abs > 0 || b.rel > 0))
    return Applied::kSkipped;
  uint8_t mode = b.abs > 0 ? 0 : 1;
  size_t side_before = side_.size();
  quant_encode(mode, b.abs, b.rel, src_, dst_->data(), m_, w_, rec, side_);
  if (too_many_exceptions(rec, m_)) {
    side_.resize(side_before);
    return Applied::kSkipped;
  }
  return Applied::kYes;
}

bool ChunkEncoder::write(std::vector<uint8_t>& out, std::string* err) {
  const size_t out_start = out.size();
  if (h_.entropy == Entropy::kFpzip) {
    // fpzip codes floats only; for anything else, or if it fails, the chunk gets zstd -3.
    if (write_fpzip(out)) return true;
    h_.entropy = Entropy::kZstd;
    h_.level = 3;
  }
  write_header(h_, out);
  return write_body(out, out_start, err);
}

bool ChunkEncoder::write_fpzip(std::vector<uint8_t>& out) {
  bool only_native = std::all_of(h_.steps.begin(), h_.steps.end(),
                                 [](const StepRecord& r) { return r.spec.kind == Step::kSwap; });
  if (!is_float_ || w_ != elem_ || !only_native) return false;
  const size_t out_start = out.size();
  write_header(h_, out);
  if (fpzip_encode(src_, m_, w_, h_.inner, out)) {
    out.insert(out.end(), in_ + m_ * elem_, in_ + n_);  // the tail, verbatim
    return true;
  }
  out.resize(out_start);
  return false;
}

bool ChunkEncoder::write_body(std::vector<uint8_t>& out, size_t out_start, std::string* err) {
  const size_t main = m_ * w_, tail = n_ - m_ * elem_, total = main + side_.size() + tail;
  const uint8_t* body = nullptr;
  if (src_ == in_ && side_.empty()) {
    body = in_;  // no step applied: the chunk itself, tail included, in place
  } else {
    // The main stream lies in the last step's buffer (or the chunk): side data and tail
    // are put after it there when it has room, else all three are joined in the other.
    std::vector<uint8_t>& last = dst_ == &buf_a_ ? buf_b_ : buf_a_;
    std::vector<uint8_t>& joined = src_ == last.data() && last.size() >= total ? last : *dst_;
    if (joined.size() < total) joined.resize(total);
    if (main && src_ != joined.data()) memmove(joined.data(), src_, main);
    if (!side_.empty()) memcpy(joined.data() + main, side_.data(), side_.size());
    if (tail) memcpy(joined.data() + main + side_.size(), in_ + m_ * elem_, tail);
    body = joined.data();
  }
  if (!entropy_encode(h_.entropy, h_.level, body, total, out)) {
    out.resize(out_start);
    return fail(err, "entropy stage failed");
  }
  return true;
}

size_t ChunkEncoder::trial_size() {
  const bool shuffled = !h_.steps.empty() && h_.steps.back().spec.kind == Step::kShuffle;
  thread_local std::vector<uint8_t> out, rest;  // reused by every trial of the thread
  out.clear();
  if (!shuffled || h_.entropy != Entropy::kZstd || w_ < 2 || m_ == 0)
    return write(out, nullptr) ? out.size() : 0;
  // A chunk of the stream (4 MiB) holds each byte plane in whole zstd blocks (128 KiB),
  // each with its own literal tables; the trial's planes (128 KiB in all) would share one
  // block and its tables, which hides most of what shuffle gains on noisy values. So the
  // planes are coded apart here, as the chunk's blocks will code them.
  write_header(h_, out);
  for (uint32_t p = 0; p < w_; ++p)
    if (!entropy_encode(h_.entropy, h_.level, src_ + p * m_, m_, out)) return 0;
  const size_t tail = n_ - m_ * elem_;
  rest.assign(side_.begin(), side_.end());
  rest.insert(rest.end(), in_ + m_ * elem_, in_ + m_ * elem_ + tail);
  if (!rest.empty() && !entropy_encode(h_.entropy, h_.level, rest.data(), rest.size(), out))
    return 0;
  return out.size();
}

}  // namespace

Chain bytes_chain(int zstd_level) { return zstd_chain({}, zstd_level); }

bool lossless_chain_from_spec(const std::vector<uint8_t>& spec, Chain* out) {
  Plan plan;
  if (!parse_plan(spec, plan)) return false;
  for (const StepSpec& s : plan.steps)
    if (s.kind == Step::kQuant) return false;
  Chain c;
  c.spec = serialize_plan(plan);
  c.name = plan_name(plan);
  *out = std::move(c);
  return true;
}

Chain shuffle_chain(const Layout& layout, int zstd_level) {
  if (parse_dtype(layout.dtype).elem < 2) return bytes_chain(zstd_level);
  return zstd_chain({{Step::kShuffle}}, zstd_level);
}

bool encode(const Chain& chain, const Layout& layout, const uint8_t* in, size_t n,
            std::vector<uint8_t>& out, std::string* err) {
  Plan plan;
  if (!parse_plan(chain.spec, plan)) return fail(err, "malformed chain spec");
  // Two scratch buffers per thread, swapped after each step; reused across chunks.
  thread_local std::vector<uint8_t> buf_a, buf_b, side;
  ChunkEncoder enc(chain, plan, layout, in, n, buf_a, buf_b, side);
  // The chunk is coded into a frame the thread keeps (room for the entropy stage's bound,
  // warm after the first chunk), then copied out at its exact size: coding straight into
  // `out` zero-filled the bound of fresh memory for every chunk, whose page faults were
  // the largest cost of a later checkpoint's encode (docs in docs/internals.md, "The commit
  // pipeline and its memory").
  thread_local std::vector<uint8_t> frame;
  frame.clear();
  if (!enc.run_steps(err) || !enc.write(frame, err)) return false;
  out.insert(out.end(), frame.begin(), frame.end());
  return true;
}

size_t trial_size(const Chain& chain, const Layout& layout, const uint8_t* in, size_t n) {
  Plan plan;
  if (!parse_plan(chain.spec, plan)) return 0;
  thread_local std::vector<uint8_t> buf_a, buf_b, side;
  ChunkEncoder enc(chain, plan, layout, in, n, buf_a, buf_b, side);
  return enc.run_steps(nullptr) ? enc.trial_size() : 0;
}

}  // namespace ckptfwd::codec
