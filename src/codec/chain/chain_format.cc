// Encoding and hostile-input parsing of chain specs and kChain chunk headers.
#include "codec/chain/chain_format.h"

#include <cstring>
#include <optional>

namespace ckptfwd::codec::chain {
namespace {

constexpr char kMagic[4] = {'C', 'K', 'C', 'H'};

struct Writer {
  std::vector<uint8_t>& out;
  void u8(uint8_t v) { out.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void f64(double v) {
    uint64_t b;
    memcpy(&b, &v, 8);
    u64(b);
  }
};

// Every read is bounds-checked; after the first failure all reads return 0 and ok stays false.
struct Reader {
  const uint8_t* p;
  size_t n;
  size_t pos = 0;
  bool ok = true;
  bool need(size_t k) {
    if (!ok || n - pos < k) ok = false;
    return ok;
  }
  uint8_t u8() { return need(1) ? p[pos++] : 0; }
  uint64_t le(int bytes) {
    if (!need(bytes)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t(p[pos + i]) << (8 * i);
    pos += bytes;
    return v;
  }
  double f64() {
    uint64_t b = le(8);
    double v;
    memcpy(&v, &b, 8);
    return v;
  }
};

bool known_step(uint8_t k) { return k >= 1 && k <= 14; }
bool has_record(Step s) {
  return s == Step::kFixed || s == Step::kDict || s == Step::kQuant || s == Step::kRecords;
}

}  // namespace

Dtype parse_dtype(const std::string& name) {
  // At most 6 digits (kMaxElemSize has 5): a name with more, leading zeros, reads as
  // bytes, so the chain chosen for it stays what it was before base/dtype.h held the table.
  std::optional<DtypeInfo> t = dtype_lookup(name, 6);
  Dtype d;
  if (!t || t->size > kMaxElemSize) return d;
  d.kind = t->kind;
  d.elem = t->size;
  d.big_endian = t->big_endian;
  return d;
}

std::vector<uint8_t> serialize_plan(const Plan& plan) {
  std::vector<uint8_t> out;
  Writer w{out};
  w.u8(kSpecVersion);
  w.u8(static_cast<uint8_t>(plan.steps.size()));
  for (const StepSpec& s : plan.steps) {
    w.u8(static_cast<uint8_t>(s.kind));
    w.u8(s.param);
  }
  w.u8(static_cast<uint8_t>(plan.entropy));
  w.u8(static_cast<uint8_t>(plan.level));
  return out;
}

bool parse_plan(const std::vector<uint8_t>& spec, Plan& plan) {
  Reader r{spec.data(), spec.size()};
  if (r.u8() != kSpecVersion) return false;
  size_t steps = r.u8();
  if (steps > kMaxSteps) return false;
  plan.steps.clear();
  for (size_t i = 0; i < steps && r.ok; ++i) {
    uint8_t k = r.u8(), param = r.u8();
    if (!known_step(k)) return false;
    plan.steps.push_back({static_cast<Step>(k), param});
  }
  uint8_t e = r.u8();
  plan.level = static_cast<int8_t>(r.u8());
  if (e > 3) return false;
  plan.entropy = static_cast<Entropy>(e);
  return r.ok && r.pos == spec.size();
}

std::string plan_name(const Plan& plan) {
  std::string s;
  for (const StepSpec& st : plan.steps) {
    const bool zz = st.param == 1;
    switch (st.kind) {
      case Step::kSwap:
        s += "native";
        break;
      case Step::kFixed:
        s += "fixed(e=" + std::to_string(st.param) + ")";
        break;
      case Step::kDict:
        s += "dict";
        break;
      case Step::kQuant:
        s += st.param ? "quant(rel)" : "quant(abs)";
        break;
      case Step::kDelta:
        s += zz ? "delta+zigzag" : "delta";
        break;
      case Step::kXor:
        s += "xor";
        break;
      case Step::kPrevRow:
        s += zz ? "prevrow+zigzag" : "prevrow";
        break;
      case Step::kLorenzo:
        s += zz ? "lorenzo+zigzag" : "lorenzo";
        break;
      case Step::kLorenzo3:
        s += zz ? "lorenzo3d+zigzag" : "lorenzo3d";
        break;
      case Step::kShuffle:
        s += "shuffle";
        break;
      case Step::kByteDelta:
        s += "bytedelta";
        break;
      case Step::kColumns:
        s += "columns";
        break;
      case Step::kRecords:
        s += "records";
        break;
      case Step::kWavelet:
        s += "wavelet(" + std::to_string(st.param) + ")";
        break;
    }
    s += "+";
  }
  switch (plan.entropy) {
    case Entropy::kNone:
      s += "none";
      break;
    case Entropy::kZstd:
      s += "zstd-" + std::to_string(plan.level);
      break;
    case Entropy::kZlib:
      s += "zlib-" + std::to_string(plan.level);
      break;
    case Entropy::kFpzip:
      s += "fpzip";
      break;
  }
  return s;
}

void write_header(const ChunkHeader& h, std::vector<uint8_t>& out) {
  Writer w{out};
  for (char c : kMagic) w.u8(static_cast<uint8_t>(c));
  w.u8(kChunkVersion);
  w.u8(static_cast<uint8_t>(h.dtype.kind));
  w.u32(h.dtype.elem);
  w.u8(h.dtype.big_endian ? 1 : 0);
  w.u8(static_cast<uint8_t>(h.inner.size()));
  for (uint64_t d : h.inner) w.u64(d);
  w.u64(h.raw_size);
  w.u8(static_cast<uint8_t>(h.steps.size()));
  for (const StepRecord& s : h.steps) {
    w.u8(static_cast<uint8_t>(s.spec.kind));
    w.u8(s.spec.param);
    if (!has_record(s.spec.kind)) continue;
    w.u8(s.width);
    w.u64(s.count);
    if (s.spec.kind == Step::kRecords) w.u64(s.head);
    if (s.spec.kind != Step::kQuant) continue;
    w.f64(s.scale);
    w.f64(s.max_err);
  }
  w.u8(static_cast<uint8_t>(h.entropy));
  w.u8(static_cast<uint8_t>(h.level));
}

bool parse_header(const uint8_t* p, size_t n, ChunkHeader& h, size_t* body_offset) {
  Reader r{p, n};
  if (!r.need(5) || memcmp(p, kMagic, 4) != 0) return false;
  r.pos = 4;
  if (r.u8() != kChunkVersion) return false;
  uint8_t kind = r.u8();
  h.dtype.elem = static_cast<uint32_t>(r.le(4));
  uint8_t be = r.u8();
  if (kind > 3 || be > 1 || h.dtype.elem == 0 || h.dtype.elem > kMaxElemSize) return false;
  h.dtype.kind = static_cast<DtypeKind>(kind);
  h.dtype.big_endian = be == 1;
  size_t inner = r.u8();
  if (inner > kMaxInner) return false;
  h.inner.clear();
  for (size_t i = 0; i < inner; ++i) h.inner.push_back(r.le(8));
  h.raw_size = r.le(8);
  size_t steps = r.u8();
  if (steps > kMaxSteps) return false;
  h.steps.clear();
  for (size_t i = 0; i < steps && r.ok; ++i) {
    StepRecord s;
    uint8_t k = r.u8();
    if (!known_step(k)) return false;
    s.spec = {static_cast<Step>(k), r.u8()};
    if (has_record(s.spec.kind)) {
      s.width = r.u8();
      s.count = r.le(8);
    }
    if (s.spec.kind == Step::kRecords) s.head = r.le(8);
    if (s.spec.kind == Step::kQuant) {
      s.scale = r.f64();
      s.max_err = r.f64();
    }
    h.steps.push_back(s);
  }
  uint8_t e = r.u8();
  h.level = static_cast<int8_t>(r.u8());
  if (!r.ok || e > 3) return false;
  h.entropy = static_cast<Entropy>(e);
  *body_offset = r.pos;
  return true;
}

}  // namespace ckptfwd::codec::chain
