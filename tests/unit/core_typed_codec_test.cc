// Typed codec chains (codec/chain/typed.h): bit-exact round trips for every dtype, step and
// entropy stage (special floats, random and smooth data, odd lengths, big-endian data);
// hostile chunks rejected without crashing; lossy bounds hold on every value and nothing
// is lossy without opt-in; the selector's choices.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>

#include "codec/chain/chain_format.h"
#include "codec/chain/chain_speeds.h"
#include "codec/chain/transforms.h"
#include "codec/chain/typed.h"
#include "codec/codec.h"

namespace ckptfwd::codec {
namespace {

using chain::Entropy;
using chain::Plan;
using chain::Step;
using chain::StepSpec;

const Codec& chain_codec() { return *codec_by_id(static_cast<uint8_t>(CodecId::kChain)); }

Chain chain_of(std::vector<StepSpec> steps, Entropy e = Entropy::kZstd, int level = 1) {
  Plan p;
  p.steps = std::move(steps);
  p.entropy = e;
  p.level = static_cast<int8_t>(level);
  Chain c;
  c.spec = chain::serialize_plan(p);
  c.name = chain::plan_name(p);
  return c;
}

// Stores values (native doubles) as elements of dtype: floats, integers, either byte order.
std::vector<uint8_t> as_dtype(const std::vector<double>& v, const std::string& dtype) {
  chain::Dtype d = chain::parse_dtype(dtype);
  std::vector<uint8_t> out(v.size() * d.elem);
  for (size_t i = 0; i < v.size(); ++i) {
    uint8_t* p = out.data() + i * d.elem;
    if (d.kind == chain::DtypeKind::kFloat && d.elem == 4) {
      float f = static_cast<float>(v[i]);
      memcpy(p, &f, 4);
    } else if (d.kind == chain::DtypeKind::kFloat) {
      memcpy(p, &v[i], 8);
    } else {
      int64_t x = std::isfinite(v[i]) ? static_cast<int64_t>(std::fmod(v[i], 1e15)) : 7;
      memcpy(p, &x, std::min<uint32_t>(d.elem, 8));
      for (uint32_t b = 8; b < d.elem; ++b) p[b] = static_cast<uint8_t>(i * 31 + b);
    }
    if (d.big_endian) std::reverse(p, p + d.elem);
  }
  return out;
}

std::vector<double> smooth(size_t n, size_t row) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = 280 + 10 * std::sin(double(i % row) / 9) + 5 * std::cos(double(i / row) / 7);
  return v;
}
std::vector<double> decimal(size_t n, size_t row) {
  std::vector<double> v = smooth(n, row);
  for (double& x : v) x = std::round(x * 100) / 100;
  return v;
}
std::vector<double> random_values(size_t n, uint32_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> nd(0, 1e3);
  std::vector<double> v(n);
  for (double& x : v) x = nd(g);
  return v;
}
// -0.0, NaNs with payloads, infinities, denormals, extremes, among decimals.
std::vector<uint8_t> special_floats(size_t n, bool f64, bool be) {
  std::vector<uint8_t> out = as_dtype(decimal(n, 17), f64 ? "F64LE" : "F32LE");
  const uint64_t specials64[] = {
      0x8000000000000000ull, 0x7FF8000000000123ull, 0xFFF0000000000001ull, 0x7FF0000000000000ull,
      0xFFF0000000000000ull, 0x0000000000000001ull, 0x000FFFFFFFFFFFFFull, 0x7FEFFFFFFFFFFFFFull};
  const uint32_t specials32[] = {0x80000000u, 0x7FC00123u, 0xFF800001u, 0x7F800000u,
                                 0xFF800000u, 0x00000001u, 0x007FFFFFu, 0x7F7FFFFFu};
  for (size_t i = 0; i < n; i += 5) {
    size_t k = (i / 5) % 8;
    if (f64)
      memcpy(&out[i * 8], &specials64[k], 8);
    else
      memcpy(&out[i * 4], &specials32[k], 4);
  }
  const uint32_t w = f64 ? 8 : 4;
  if (be)
    for (size_t i = 0; i < n; ++i) std::reverse(&out[i * w], &out[i * w] + w);
  return out;
}

// Encodes and decodes; the output buffer has a guard byte past raw_n.
void expect_round_trip(const Chain& c, const Layout& l, const std::vector<uint8_t>& in,
                       const std::string& what) {
  std::vector<uint8_t> packed;
  std::string err;
  ASSERT_TRUE(encode(c, l, in.data(), in.size(), packed, &err)) << what << ": " << err;
  std::vector<uint8_t> back(in.size() + 1, 0xA5);
  ASSERT_TRUE(chain_codec().decompress(packed.data(), packed.size(), back.data(), in.size()))
      << what << " chain " << c.name << " n=" << in.size();
  EXPECT_EQ(back[in.size()], 0xA5) << what << ": wrote past raw_n";
  back.resize(in.size());
  EXPECT_TRUE(back == in) << what << " chain " << c.name << " n=" << in.size();
}

std::vector<Chain> every_chain() {
  std::vector<Chain> out;
  const std::vector<std::vector<StepSpec>> reps = {{}, {{Step::kFixed, 2}}, {{Step::kDict}}};
  const std::vector<std::vector<StepSpec>> preds = {{},
                                                    {{Step::kDelta, 1}},
                                                    {{Step::kDelta, 0}},
                                                    {{Step::kXor}},
                                                    {{Step::kPrevRow, 1}},
                                                    {{Step::kLorenzo, 1}},
                                                    {{Step::kLorenzo, 0}},
                                                    {{Step::kLorenzo3, 1}},
                                                    {{Step::kLorenzo3, 0}}};
  for (bool swap : {false, true})
    for (const auto& r : reps)
      for (const auto& p : preds)
        for (int tail = 0; tail < 3; ++tail) {
          std::vector<StepSpec> s;
          if (swap) s.push_back({Step::kSwap});
          s.insert(s.end(), r.begin(), r.end());
          s.insert(s.end(), p.begin(), p.end());
          if (tail >= 1) s.push_back({Step::kShuffle});
          if (tail == 2) s.push_back({Step::kByteDelta});
          out.push_back(chain_of(s));
        }
  // Records stored field by field, before a predictor, a representation or alone.
  for (bool swap : {false, true})
    for (const auto& p : preds) {
      std::vector<StepSpec> s;
      if (swap) s.push_back({Step::kSwap});
      s.push_back({Step::kColumns});
      s.insert(s.end(), p.begin(), p.end());
      s.push_back({Step::kShuffle});
      out.push_back(chain_of(s));
    }
  out.push_back(chain_of({{Step::kColumns}, {Step::kFixed, 2}, {Step::kDelta, 1}}));
  // Records led by their lengths: on data that does not parse as records, skipped.
  out.push_back(chain_of({{Step::kRecords}, {Step::kDelta, 1}, {Step::kShuffle}}));
  out.push_back(chain_of({{Step::kSwap}, {Step::kRecords}, {Step::kXor}, {Step::kShuffle}}));
  out.push_back(chain_of({{Step::kRecords}}, Entropy::kNone, 0));
  // The integer wavelet on the values, after fixed-point or a dictionary, one level or many.
  out.push_back(chain_of({{Step::kWavelet, 1}, {Step::kShuffle}}));
  out.push_back(
      chain_of({{Step::kSwap}, {Step::kFixed, 2}, {Step::kWavelet, 4}, {Step::kShuffle}}));
  out.push_back(chain_of({{Step::kDict}, {Step::kWavelet, 8}}, Entropy::kNone, 0));
  out.push_back(chain_of({{Step::kColumns}}, Entropy::kNone, 0));
  out.push_back(chain_of({{Step::kShuffle}}, Entropy::kZlib, 6));
  out.push_back(chain_of({{Step::kLorenzo, 1}}, Entropy::kNone, 0));
  out.push_back(chain_of({{Step::kSwap}}, Entropy::kFpzip, 0));
  out.push_back(chain_of({}, Entropy::kFpzip, 0));
  out.push_back(bytes_chain(3));
  return out;
}

const char* const kDtypes[] = {"F32LE", "F32BE", "F64LE", "F64BE", "I8",    "U8",
                               "I16LE", "U16BE", "I32LE", "I32BE", "U64LE", "I64BE",
                               "CHAR",  "STR7",  "CMP12", "B3",    "bytes"};

// fpzip is trusted in the round-trip tests only (see set_fpzip_trusted in typed.h).
struct TrustFpzip {
  TrustFpzip() { set_fpzip_trusted(true); }
  ~TrustFpzip() { set_fpzip_trusted(false); }
};

TEST(TypedCodec, EveryChainRoundTripsEveryDtypeBitExact) {
  TrustFpzip trust;
  const std::vector<Chain> chains = every_chain();
  for (const char* dtype : kDtypes) {
    const uint32_t elem = chain::parse_dtype(dtype).elem;
    Layout l{dtype, {3, 37}};
    std::vector<std::vector<uint8_t>> inputs = {as_dtype(smooth(2000, 37), dtype),
                                                as_dtype(random_values(999, 5), dtype),
                                                as_dtype(decimal(37 * 9, 37), dtype)};
    if (std::string(dtype).rfind("F", 0) == 0)
      inputs.push_back(
          special_floats(1111, elem == 8, std::string(dtype).find("BE") != std::string::npos));
    for (std::vector<uint8_t>& in : inputs)
      for (const Chain& c : chains) {
        expect_round_trip(c, l, in, dtype);
        // Odd lengths: not a multiple of the element, no element, one element, empty.
        if (elem > 1) {
          std::vector<uint8_t> odd(in.begin(), in.begin() + (in.size() - elem / 2 - 1));
          expect_round_trip(c, l, odd, std::string(dtype) + " odd");
        }
        expect_round_trip(c, l, std::vector<uint8_t>(in.begin(), in.begin() + elem), "one");
        if (elem > 1)
          expect_round_trip(c, l, std::vector<uint8_t>(in.begin(), in.begin() + 1), "tail");
        expect_round_trip(c, l, {}, "empty");
        if (HasFatalFailure()) return;
      }
  }
}

TEST(TypedCodec, LayoutsWithoutRowsAndUnknownDtypes) {
  TrustFpzip trust;
  std::vector<uint8_t> in = as_dtype(smooth(5000, 100), "F32BE");
  for (const Chain& c : every_chain()) {
    expect_round_trip(c, Layout{"F32BE", {}}, in, "no inner");
    expect_round_trip(c, Layout{"F32BE", {100000}}, in, "row longer than the chunk");
    expect_round_trip(c, Layout{"NOPE", {}}, in, "unknown dtype");
  }
}

TEST(TypedCodec, DescribePayloadNamesTheChain) {
  std::vector<uint8_t> in = as_dtype(decimal(4096, 64), "F32BE"), packed;
  Chain c = chain_of({{Step::kSwap}, {Step::kFixed, 2}, {Step::kLorenzo, 1}, {Step::kShuffle}});
  ASSERT_TRUE(encode(c, Layout{"F32BE", {64}}, in.data(), in.size(), packed));
  EXPECT_EQ(describe_payload(packed.data(), packed.size()),
            "native+fixed(e=2)+lorenzo+zigzag+shuffle+zstd-1");
  EXPECT_EQ(describe_payload(in.data(), in.size()), "");
  EXPECT_EQ(bytes_chain(3).name, "zstd-3");
}

TEST(TypedCodec, CorruptAndTruncatedChunksAreRejectedWithoutCrashing) {
  std::mt19937 g(7);
  std::vector<std::pair<Chain, std::vector<uint8_t>>> cases;
  for (const Chain& c : every_chain()) cases.push_back({c, as_dtype(decimal(700, 35), "F64BE")});
  for (auto& [c, in] : cases) {
    std::vector<uint8_t> packed;
    ASSERT_TRUE(encode(c, Layout{"F64BE", {35}}, in.data(), in.size(), packed));
    std::vector<uint8_t> back(in.size() + 1, 0xA5);
    for (size_t cut = 0; cut < packed.size(); cut += 1 + packed.size() / 97)
      EXPECT_FALSE(chain_codec().decompress(packed.data(), cut, back.data(), in.size()))
          << c.name << " cut " << cut;
    EXPECT_FALSE(
        chain_codec().decompress(packed.data(), packed.size(), back.data(), in.size() - 1));
    for (int k = 0; k < 300; ++k) {
      std::vector<uint8_t> bad = packed;
      int flips = 1 + g() % 3;
      for (int f = 0; f < flips; ++f) bad[g() % bad.size()] ^= static_cast<uint8_t>(1 + g() % 255);
      chain_codec().decompress(bad.data(), bad.size(), back.data(), in.size());  // no crash
      EXPECT_EQ(back[in.size()], 0xA5);
    }
  }
  // fpzip chunks (written while trusted) are refused while it is not.
  std::vector<uint8_t> in = as_dtype(decimal(700, 35), "F64LE"), packed, back(in.size());
  {
    TrustFpzip trust;
    ASSERT_TRUE(encode(chain_of({}, Entropy::kFpzip, 0), Layout{"F64LE", {35}}, in.data(),
                       in.size(), packed));
    EXPECT_EQ(describe_payload(packed.data(), packed.size()), "fpzip");
    EXPECT_TRUE(chain_codec().decompress(packed.data(), packed.size(), back.data(), in.size()));
  }
  EXPECT_FALSE(chain_codec().decompress(packed.data(), packed.size(), back.data(), in.size()));
  std::vector<uint8_t> junk(1000, 0xFF), out(64);
  EXPECT_FALSE(chain_codec().decompress(junk.data(), junk.size(), out.data(), out.size()));
  EXPECT_FALSE(chain_codec().decompress(nullptr, 0, out.data(), 0));
}

// Headers that lie about counts must fail before allocating or reading past the body.
TEST(TypedCodec, HostileHeaderCountsAreRefused) {
  chain::ChunkHeader h;
  h.dtype = chain::parse_dtype("F64LE");
  h.raw_size = 800;
  chain::StepRecord fixed;
  fixed.spec = {Step::kFixed, 2};
  fixed.width = 8;
  fixed.count = 100;  // exceptions for every value... of 100 values: too large a body
  h.steps = {fixed};
  h.entropy = Entropy::kNone;
  for (uint64_t count : {uint64_t(100), uint64_t(1) << 62, ~uint64_t(0)}) {
    h.steps[0].count = count;
    std::vector<uint8_t> chunk;
    chain::write_header(h, chunk);
    chunk.resize(chunk.size() + 800 + 100 * 16);
    std::vector<uint8_t> out(800);
    EXPECT_FALSE(chain_codec().decompress(chunk.data(), chunk.size(), out.data(), out.size()));
  }
  h.steps[0].spec = {Step::kDict, 0};
  h.steps[0].width = 1;
  h.steps[0].count = 1;  // one entry; the indices below say 200
  std::vector<uint8_t> chunk;
  chain::write_header(h, chunk);
  chunk.resize(chunk.size() + 100, 200);
  chunk.resize(chunk.size() + 8, 0);
  std::vector<uint8_t> out(800);
  EXPECT_FALSE(chain_codec().decompress(chunk.data(), chunk.size(), out.data(), out.size()));
}

TEST(TypedCodec, LossyBoundHoldsOnEveryValueAndNeedsOptIn) {
  for (const char* dtype : {"F32LE", "F64BE"}) {
    std::vector<uint8_t> in =
        special_floats(20000, std::string(dtype) == "F64BE", std::string(dtype) == "F64BE");
    std::vector<double> rnd = random_values(20000, 3);
    std::vector<uint8_t> r = as_dtype(rnd, dtype);
    in.insert(in.end(), r.begin(), r.end());
    const bool be = std::string(dtype) == "F64BE";
    const uint32_t w = be ? 8 : 4;
    auto value = [&](const std::vector<uint8_t>& b, size_t i) {
      uint8_t tmp[8];
      memcpy(tmp, &b[i * w], w);
      if (be) std::reverse(tmp, tmp + w);
      if (w == 4) {
        float f;
        memcpy(&f, tmp, 4);
        return double(f);
      }
      double d;
      memcpy(&d, tmp, 8);
      return d;
    };
    for (LossyBound bound : {LossyBound{0.01, 0}, LossyBound{0, 1e-3}, LossyBound{0.5, 1e-4}}) {
      SelectOptions opt;
      opt.lossy = bound;
      Chain c = select_chain(Layout{dtype, {}}, in.data(), in.size(), opt);
      Chain q = chain_of({{Step::kSwap}, {Step::kQuant}, {Step::kDelta, 1}, {Step::kShuffle}});
      q.lossy = bound;
      for (const Chain& ch : {c, q}) {
        std::vector<uint8_t> packed, back(in.size());
        ASSERT_TRUE(encode(ch, Layout{dtype, {}}, in.data(), in.size(), packed)) << ch.name;
        ASSERT_TRUE(
            chain_codec().decompress(packed.data(), packed.size(), back.data(), back.size()));
        for (size_t i = 0; i < in.size() / w; ++i) {
          double v = value(in, i), b = value(back, i);
          if (!std::isfinite(v)) {
            EXPECT_EQ(memcmp(&in[i * w], &back[i * w], w), 0) << "non-finite kept verbatim";
            continue;
          }
          double e = std::fabs(b - v);
          if (bound.abs > 0) {
            ASSERT_LE(e, bound.abs) << ch.name << " value " << v;
          }
          if (bound.rel > 0) {
            ASSERT_LE(e, bound.rel * std::fabs(v)) << ch.name << " value " << v;
          }
        }
      }
      EXPECT_NE(q.name.find("quant"), std::string::npos);
    }
    // A lossy step without a LossyBound is refused; the selector never picks one unasked.
    Chain q = chain_of({{Step::kQuant}, {Step::kShuffle}});
    std::vector<uint8_t> packed;
    std::string err;
    EXPECT_FALSE(encode(q, Layout{dtype, {}}, in.data(), in.size(), packed, &err));
    EXPECT_TRUE(packed.empty());
    Chain s = select_chain(Layout{dtype, {}}, in.data(), in.size());
    EXPECT_EQ(s.name.find("quant"), std::string::npos) << s.name;
    EXPECT_FALSE(s.lossy.has_value());
    expect_round_trip(s, Layout{dtype, {}}, in, "selected lossless");
  }
}

double ratio(const Chain& c, const Layout& l, const std::vector<uint8_t>& in);

// The integer wavelet gives back every integer exactly, whatever the values (the extremes
// of each width wrap in its lifting), the shape (odd sides, one row, one column, a partial
// last row) and the levels; on a plane (a + b*row + c*col) its details are zero.
TEST(TypedCodec, WaveletIsExactForAnyIntegers) {
  std::mt19937_64 g(17);
  for (uint32_t w : {1u, 2u, 4u, 8u})
    for (auto [m, row] : {std::pair<uint64_t, uint64_t>{0, 0},
                          {1, 0},
                          {2, 0},
                          {7, 0},
                          {1000, 0},
                          {37 * 9, 37},
                          {37 * 9 + 5, 37},
                          {64, 64},
                          {64, 1},
                          {33 * 17, 17}})
      for (uint8_t levels : {uint8_t(1), uint8_t(3), uint8_t(8)}) {
        std::vector<uint8_t> in(m * w), coded(m * w), back(m * w);
        for (uint8_t& b : in) b = static_cast<uint8_t>(g());
        // every other chunk at the extremes of the width, where the lifting wraps
        if (levels == 3)
          for (uint64_t i = 0; i < m; ++i) memset(&in[i * w], (i % 3) ? 0xFF : 0x7F, w);
        chain::wavelet_forward(in.data(), coded.data(), m, w, row, levels);
        chain::wavelet_inverse(coded.data(), back.data(), m, w, row, levels);
        ASSERT_TRUE(back == in) << "w " << w << " m " << m << " row " << row << " levels "
                                << int(levels);
      }
  const uint64_t row = 40, rows = 24, m = row * rows;
  std::vector<uint8_t> plane(m * 4), coded(m * 4);
  for (uint64_t i = 0; i < m; ++i) {
    int32_t v = 1000 + 3 * static_cast<int32_t>(i % row) - 7 * static_cast<int32_t>(i / row);
    memcpy(&plane[i * 4], &v, 4);
  }
  chain::wavelet_forward(plane.data(), coded.data(), m, 4, row, 1);
  size_t zero_details = 0;
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < row; ++c)
      if ((r >= rows / 2 || c >= row / 2) && !memcmp(&coded[(r * row + c) * 4], "\0\0\0\0", 4))
        ++zero_details;
  // every detail but those at the far edges, where the extension mirrors the slope
  EXPECT_GE(zero_details, (m - m / 4) * 9 / 10);
}

// Quantization then the wavelet keeps every value within its bound (the wavelet is exact
// on the codes). On a smooth field under noise 10 to 100 times the bound, it stores less than
// quantization + 2-D Lorenzo at the same bound (whose prediction a + b - c adds up the
// noise of three neighbours, where the wavelet's low pass averages it); on the field
// without noise Lorenzo wins, which is why the selector tries both.
TEST(TypedCodec, LossyWaveletChainKeepsTheBoundAndWinsOnNoisyFields) {
  const uint64_t row = 256;
  const Layout l{"F64LE", {row}};
  std::mt19937_64 g(3);
  std::normal_distribution<double> nd(0, 1);
  for (double abs : {1e-1, 1e-3}) {
    std::vector<double> v = smooth(row * 128, row);
    const std::vector<uint8_t> clean = as_dtype(v, "F64LE");
    for (double& x : v) x += std::sqrt(10 * abs) * nd(g);  // sigma 1 and 0.1
    const std::vector<uint8_t> in = as_dtype(v, "F64LE");
    Chain wave = chain_of({{Step::kQuant}, {Step::kWavelet, 6}, {Step::kShuffle}});
    Chain lorenzo = chain_of({{Step::kQuant}, {Step::kLorenzo, 1}, {Step::kShuffle}});
    wave.lossy = lorenzo.lossy = LossyBound{abs, 0};
    std::vector<uint8_t> packed, back(in.size());
    ASSERT_TRUE(encode(wave, l, in.data(), in.size(), packed));
    ASSERT_TRUE(chain_codec().decompress(packed.data(), packed.size(), back.data(), back.size()));
    for (size_t i = 0; i < v.size(); ++i) {
      double b;
      memcpy(&b, &back[i * 8], 8);
      ASSERT_LE(std::fabs(b - v[i]), abs) << "value " << i;
    }
    EXPECT_GT(ratio(wave, l, in), 1.05 * ratio(lorenzo, l, in)) << abs;
    EXPECT_LT(ratio(wave, l, clean), ratio(lorenzo, l, clean)) << abs;
  }
}

// A wavelet step with no level or more than kMaxWaveletLevels, or on values no integer type
// holds (3-byte elements), is refused by the decoder.
TEST(TypedCodec, HostileWaveletStepsAreRefused) {
  const std::vector<uint8_t> in = as_dtype(smooth(2000, 40), "I32LE");
  std::vector<uint8_t> packed;
  ASSERT_TRUE(
      encode(chain_of({{Step::kWavelet, 3}}), Layout{"I32LE", {40}}, in.data(), in.size(), packed));
  // The step's param byte follows its kind byte (14) in the header.
  size_t at = 0;
  for (size_t i = 4; i + 1 < packed.size() && !at; ++i)
    if (packed[i] == 14 && packed[i + 1] == 3) at = i + 1;
  ASSERT_NE(at, 0u);
  std::vector<uint8_t> back(in.size());
  ASSERT_TRUE(chain_codec().decompress(packed.data(), packed.size(), back.data(), back.size()));
  EXPECT_TRUE(back == in);
  for (uint8_t bad : {uint8_t(0), uint8_t(chain::kMaxWaveletLevels + 1), uint8_t(255)}) {
    std::vector<uint8_t> hostile = packed;
    hostile[at] = bad;
    EXPECT_FALSE(chain_codec().decompress(hostile.data(), hostile.size(), back.data(), back.size()))
        << int(bad);
  }
  const std::vector<uint8_t> b3 = as_dtype(smooth(300, 10), "B3");
  packed.clear();
  ASSERT_TRUE(
      encode(chain_of({{Step::kWavelet, 2}}), Layout{"B3", {10}}, b3.data(), b3.size(), packed));
  EXPECT_EQ(describe_payload(packed.data(), packed.size()).find("wavelet"), std::string::npos)
      << "skipped on 3-byte elements";
}

double ratio(const Chain& c, const Layout& l, const std::vector<uint8_t>& in) {
  std::vector<uint8_t> packed;
  EXPECT_TRUE(encode(c, l, in.data(), in.size(), packed));
  return double(in.size()) / double(packed.size());
}

// What a typed stream gets without a trial (a small variable an fsync waits for): byte
// shuffle then zstd at the level for multi-byte elements, the plain byte chain otherwise.
TEST(TypedCodec, ShuffleChainForStreamsWithoutATrial) {
  for (const char* dtype : kDtypes) {
    const Layout l{dtype, {50}};
    std::vector<uint8_t> in = as_dtype(smooth(3000, 50), dtype);
    Chain c = shuffle_chain(l, -1);
    expect_round_trip(c, l, in, dtype);
    EXPECT_EQ(c.name, chain::parse_dtype(dtype).elem >= 2 ? "shuffle+zstd--1" : "zstd--1") << dtype;
  }
  // Smooth float64 at zstd's first fast level: plain zstd removes next to nothing, the
  // shuffled bytes clearly shrink.
  const Layout l{"F64LE", {256}};
  std::vector<uint8_t> f = as_dtype(smooth(1 << 16, 256), "F64LE");
  const double plain = ratio(bytes_chain(-1), l, f), shuffled = ratio(shuffle_chain(l, -1), l, f);
  EXPECT_GT(shuffled, 1.15 * plain) << "plain " << plain << ", shuffled " << shuffled;
}

TEST(TypedCodec, SelectorPicksFixedPointOrDictionaryOnDecimalData) {
  SelectOptions opt;
  opt.min_mbps = 0;  // the choice, not this machine's speed, is under test
  Layout l{"F32BE", {180, 360}};
  std::vector<uint8_t> dec = as_dtype(decimal(180 * 360 * 2, 360), "F32BE");
  Chain c = select_chain(l, dec.data(), dec.size(), opt);
  EXPECT_TRUE(c.name.find("fixed") != std::string::npos || c.name.find("dict") != std::string::npos)
      << c.name;
  EXPECT_GT(ratio(c, l, dec), 1.2 * ratio(bytes_chain(3), l, dec));
  std::vector<double> cats(100000);
  std::mt19937 g(3);
  for (double& v : cats) v = (g() % 13) * 0.37;
  std::vector<uint8_t> cat_bytes = as_dtype(cats, "F64LE");
  Chain d = select_chain(Layout{"F64LE", {}}, cat_bytes.data(), cat_bytes.size(), opt);
  EXPECT_TRUE(d.name.find("dict") != std::string::npos || d.name.find("fixed") != std::string::npos)
      << d.name;
}

// Particle records as a molecular dynamics code stores them: per atom its record length,
// x y z (a drift), id, type and image flags as integers in float64 slots, and velocities.
std::vector<uint8_t> particle_records(size_t atoms, size_t fields) {
  std::mt19937_64 g(11);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> v;
  for (size_t i = 0; i < atoms; ++i) {
    const double at = static_cast<double>(i);
    v.push_back(static_cast<double>(fields));
    for (int d = 0; d < 3; ++d) v.push_back(0.01 * at + 0.3 * d + 0.05 * noise(g));
    for (uint64_t bits : {uint64_t{i + 1}, uint64_t{1 + i % 2}, uint64_t{537395712}}) {
      double slot;
      memcpy(&slot, &bits, 8);
      v.push_back(slot);
    }
    while (v.size() % fields) v.push_back(noise(g));
  }
  return as_dtype(v, "F64LE");
}

// Atoms as LAMMPS stores them in a restart file of a molecular style: each record led by
// its length, x y z (a drift), id, type and image flags as integers in float64 slots,
// velocities, then a count and pairs (bond type, partner id) of a varying number of bonds.
std::vector<double> led_records(size_t atoms) {
  std::mt19937_64 g(13);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> v;
  auto slot = [](uint64_t bits) {
    double d;
    memcpy(&d, &bits, 8);
    return d;
  };
  for (size_t i = 0; i < atoms; ++i) {
    const size_t bonds = g() % 7, len = 11 + 2 * bonds;
    v.push_back(static_cast<double>(len));
    for (int d = 0; d < 3; ++d)
      v.push_back(0.01 * static_cast<double>(i) + 0.3 * d + 0.05 * noise(g));
    for (uint64_t bits : {uint64_t{i + 1}, uint64_t{1}, uint64_t{537395712}})
      v.push_back(slot(bits));
    for (int d = 0; d < 3; ++d) v.push_back(noise(g));
    v.push_back(static_cast<double>(bonds));
    for (size_t b = 0; b < bonds; ++b) {
      v.push_back(slot(1));
      v.push_back(slot(i + 2 + b * 37 % 500));
    }
  }
  return v;
}

// kRecords stores records of several lengths field by field: a chunk cut anywhere (inside
// a record at either end) round trips with the step applied, in every dtype a length can be
// read in; on these records it beats the chains that see the fields interleaved, and the
// selector takes it for a 1-D stream.
TEST(TypedCodec, RecordsOfSeveralLengthsAreStoredFieldByField) {
  const std::vector<double> v = led_records(3000);
  for (const char* dtype : {"F64LE", "F64BE", "F32LE", "I64LE", "I32BE", "U32LE"}) {
    std::vector<double> vals = v;
    if (dtype[0] != 'F')  // integers: the bit patterns of the slots would not fit; small values
      for (double& x : vals) x = std::isfinite(x) ? std::fmod(std::fabs(std::round(x)), 1000) : 7;
    for (size_t i = 0; i < vals.size();) {  // the lengths stay what they are
      const size_t len = static_cast<size_t>(v[i]);
      ASSERT_GE(len, 1u);
      vals[i] = v[i];
      i += len;
    }
    const std::vector<uint8_t> in = as_dtype(vals, dtype);
    const uint32_t elem = chain::parse_dtype(dtype).elem;
    const bool be = std::string(dtype).find("BE") != std::string::npos;
    std::vector<StepSpec> steps;
    if (be) steps.push_back({Step::kSwap});
    steps.insert(steps.end(), {{Step::kRecords}, {Step::kDelta, 1}, {Step::kShuffle}});
    const Chain c = chain_of(steps);
    std::mt19937 g(3);
    for (int k = 0; k < 20; ++k) {
      const size_t m = in.size() / elem, a = k ? g() % (m / 2) : 0, b = k ? m - g() % (m / 2) : m;
      std::vector<uint8_t> cut(in.begin() + a * elem, in.begin() + b * elem);
      std::vector<uint8_t> packed;
      ASSERT_TRUE(encode(c, Layout{dtype, {}}, cut.data(), cut.size(), packed));
      EXPECT_NE(describe_payload(packed.data(), packed.size()).find("records"), std::string::npos)
          << dtype << " [" << a << ", " << b
          << "): " << describe_payload(packed.data(), packed.size());
      expect_round_trip(c, Layout{dtype, {}}, cut, std::string(dtype) + " cut");
    }
  }
  const std::vector<uint8_t> recs = as_dtype(v, "F64LE");
  const Layout l{"F64LE", {}};
  const double interleaved =
      std::max(ratio(chain_of({{Step::kDelta, 1}, {Step::kShuffle}}), l, recs),
               ratio(chain_of({{Step::kXor}, {Step::kShuffle}}), l, recs));
  const double by_field =
      ratio(chain_of({{Step::kRecords}, {Step::kDelta, 1}, {Step::kShuffle}}), l, recs);
  EXPECT_GT(by_field, 1.2 * interleaved);
  SelectOptions opt;
  opt.min_mbps = 0;
  EXPECT_NE(select_chain(l, recs.data(), recs.size(), opt).name.find("records"), std::string::npos);
  // Records of one- or two-byte values: the step is skipped (no such layout; its
  // bookkeeping would outgrow the chunk), the chunk still round trips.
  for (const char* dtype : {"U8", "I16LE"}) {
    std::vector<double> small(3000);
    for (size_t i = 0; i < small.size(); i += 3) small[i] = 3, small[i + 1] = 7, small[i + 2] = 9;
    const std::vector<uint8_t> in = as_dtype(small, dtype);
    const Chain c = chain_of({{Step::kRecords}, {Step::kDelta, 1}});
    std::vector<uint8_t> packed;
    ASSERT_TRUE(encode(c, Layout{dtype, {}}, in.data(), in.size(), packed));
    EXPECT_EQ(describe_payload(packed.data(), packed.size()).find("records"), std::string::npos);
    expect_round_trip(c, Layout{dtype, {}}, in, dtype);
  }
  // A lossy step after records would change the lengths: it is skipped, the chunk exact.
  {
    Chain lossy = chain_of({{Step::kRecords}, {Step::kQuant}, {Step::kDelta, 1}, {Step::kShuffle}});
    lossy.lossy = LossyBound{0.5, 0};
    std::vector<uint8_t> packed;
    ASSERT_TRUE(encode(lossy, l, recs.data(), recs.size(), packed));
    const std::string name = describe_payload(packed.data(), packed.size());
    EXPECT_NE(name.find("records"), std::string::npos) << name;
    EXPECT_EQ(name.find("quant"), std::string::npos) << name;
    expect_round_trip(lossy, l, recs, "records then quant");
  }
  // Values that are not records get no records candidate.
  const std::vector<uint8_t> field = as_dtype(smooth(30000, 100), "F64LE");
  EXPECT_EQ(select_chain(l, field.data(), field.size(), opt).name.find("records"),
            std::string::npos);
}

// The lengths a kRecords chunk decodes from are read from its body: a length that is zero,
// not whole, NaN, too large or running past the end fails the decode, never a write outside.
// find_records gives up on a long run of ones ending in a zero after one pass, not one per
// candidate head.
TEST(TypedCodec, HostileRecordLengthsAreRefused) {
  std::vector<double> v = led_records(200);
  std::vector<uint8_t> in = as_dtype(v, "F64LE"), packed;
  ASSERT_TRUE(encode(chain_of({{Step::kRecords}}, Entropy::kNone, 0), Layout{"F64LE", {}},
                     in.data(), in.size(), packed));
  chain::ChunkHeader h;
  size_t body = 0;
  ASSERT_TRUE(chain::parse_header(packed.data(), packed.size(), h, &body));
  ASSERT_EQ(h.steps.size(), 1u);
  ASSERT_EQ(h.steps[0].count, 200u);
  ASSERT_EQ(h.steps[0].head, 0u);
  std::vector<uint8_t> back(in.size() + 1, 0xA5);
  ASSERT_TRUE(chain_codec().decompress(packed.data(), packed.size(), back.data(), in.size()));
  const double bad_lengths[] = {0, 12.5, std::nan(""), 1e9, 4097, -12, 1e300};
  for (size_t at : {size_t{0}, size_t{57}, size_t{199}})
    for (double bad : bad_lengths) {
      std::vector<uint8_t> p = packed;
      memcpy(p.data() + body + at * 8, &bad, 8);  // column 0: the lengths
      EXPECT_FALSE(chain_codec().decompress(p.data(), p.size(), back.data(), in.size()))
          << "length " << bad << " of record " << at;
      EXPECT_EQ(back[in.size()], 0xA5);
    }
  for (uint64_t count : {uint64_t{201}, uint64_t{1} << 40, ~uint64_t{0}}) {
    chain::ChunkHeader lie = h;
    lie.steps[0].count = count;
    std::vector<uint8_t> p;
    chain::write_header(lie, p);
    p.insert(p.end(), packed.begin() + body, packed.end());
    EXPECT_FALSE(chain_codec().decompress(p.data(), p.size(), back.data(), in.size())) << count;
  }
  std::vector<double> ones(1 << 19, 1.0);
  ones.back() = 0;
  uint64_t head = 0, count = 0;
  EXPECT_FALSE(chain::find_records(reinterpret_cast<const uint8_t*>(ones.data()), ones.size(), 8,
                                   chain::DtypeKind::kFloat, &head, &count));
}

// Columns gives each field of a record array its own run: on particle records it beats the
// chains that see the fields interleaved, and the selector takes it.
TEST(TypedCodec, ColumnsWinOnRecordsOfFields) {
  const size_t fields = 11;
  const Layout l{"F64LE", {20000, fields}};
  std::vector<uint8_t> recs = particle_records(20000, fields);
  const double interleaved =
      std::max(ratio(chain_of({{Step::kPrevRow, 1}, {Step::kShuffle}}), l, recs),
               ratio(chain_of({{Step::kDelta, 1}, {Step::kShuffle}}), l, recs));
  const double by_field =
      ratio(chain_of({{Step::kColumns}, {Step::kDelta, 1}, {Step::kShuffle}}), l, recs);
  EXPECT_GT(by_field, 1.1 * interleaved);
  SelectOptions opt;
  opt.min_mbps = 0;
  Chain c = select_chain(l, recs.data(), recs.size(), opt);
  EXPECT_NE(c.name.find("columns"), std::string::npos) << c.name;
  // Rows too long to be records (grid lines) get no columns candidate.
  const Layout grid{"F64LE", {64, 256}};
  std::vector<uint8_t> field = as_dtype(smooth(64 * 256, 256), "F64LE");
  EXPECT_EQ(select_chain(grid, field.data(), field.size(), opt).name.find("columns"),
            std::string::npos);
}

// A 3-D field (z, y, x) whose plane z is a random pattern plus z times another: int64, so
// that the bit patterns the predictors work on add up. What the 3-D Lorenzo leaves of
// every plane after the first is the same (the second pattern's 2-D residual), which
// zstd then finds again; the 2-D one leaves another mix of both in each plane; it round trips
// through the block decoder's window (a plane of 4096 values of history, several blocks) and the
// selector puts it in place of the predictor it chose. The same values as planes of one row, and
// random values, keep their chain.
std::vector<uint8_t> repeated_planes(uint64_t nz, uint64_t ny, uint64_t nx) {
  std::vector<int64_t> v(nz * ny * nx), r(ny * nx), t(ny * nx);
  uint64_t s = 42;
  for (uint64_t i = 0; i < ny * nx; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    r[i] = static_cast<int64_t>(s >> 44);
    t[i] = static_cast<int64_t>(s >> 54);
  }
  for (uint64_t i = 0; i < v.size(); ++i)
    v[i] = r[i % (ny * nx)] + static_cast<int64_t>(i / (ny * nx)) * t[i % (ny * nx)];
  std::vector<uint8_t> out(v.size() * 8);
  memcpy(out.data(), v.data(), out.size());
  return out;
}

TEST(TypedCodec, ThreeDimensionalLorenzoOnAThreeDimensionalField) {
  const Layout l{"I64LE", {64, 64}};
  const std::vector<uint8_t> f = repeated_planes(40, 64, 64);
  for (const Chain& c :
       {chain_of({{Step::kDict}, {Step::kLorenzo3, 1}, {Step::kShuffle}}),
        chain_of({{Step::kLorenzo3, 1}, {Step::kShuffle}}), chain_of({{Step::kLorenzo3, 0}})}) {
    expect_round_trip(c, l, f, "3-D field");
    if (HasFatalFailure()) return;
  }
  const double two_d = ratio(chain_of({{Step::kLorenzo, 1}, {Step::kShuffle}}), l, f);
  const double three_d = ratio(chain_of({{Step::kLorenzo3, 1}, {Step::kShuffle}}), l, f);
  EXPECT_GT(three_d, 3 * two_d);
  SelectOptions opt;
  opt.min_mbps = 0;
  Chain c = select_chain(l, f.data(), f.size(), opt);
  EXPECT_NE(c.name.find("lorenzo3d"), std::string::npos) << c.name;
  const Layout flat{"I64LE", {64}};
  EXPECT_EQ(select_chain(flat, f.data(), f.size(), opt).name.find("lorenzo3d"), std::string::npos);
  const Layout floats{"F64LE", {64, 64}};
  const std::vector<uint8_t> noisy = as_dtype(random_values(40 * 64 * 64, 9), "F64LE");
  EXPECT_EQ(select_chain(floats, noisy.data(), noisy.size(), opt).name.find("lorenzo3d"),
            std::string::npos);
}

// The selector's trial sees 128 KiB; the chunk it chooses for is 4 MiB, whose byte planes
// after a shuffle fill whole zstd blocks with tables of their own. trial_size codes the
// sample's planes apart and so predicts the chunk's ratio on noisy floats (velocities),
// where coding the sample in one block underestimates shuffle's gain.
TEST(TypedCodec, TrialSizePredictsTheChunkOfAShuffledStream) {
  std::mt19937_64 g(5);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> v(4 << 17);  // 4 MiB of float64
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.5 + 0.01 * noise(g);
  std::vector<uint8_t> chunk = as_dtype(v, "F64LE");
  const Layout l{"F64LE", {}};
  const Chain c = chain_of({{Step::kShuffle}});
  std::vector<uint8_t> out;
  ASSERT_TRUE(encode(c, l, chunk.data(), chunk.size(), out));
  const double chunk_ratio = double(chunk.size()) / double(out.size());
  const std::vector<uint8_t> sample(chunk.begin(), chunk.begin() + (128 << 10));
  out.clear();
  ASSERT_TRUE(encode(c, l, sample.data(), sample.size(), out));
  const double one_block = double(sample.size()) / double(out.size());
  const double planes_apart =
      double(sample.size()) / double(trial_size(c, l, sample.data(), sample.size()));
  EXPECT_LT(std::abs(planes_apart - chunk_ratio), 0.03 * chunk_ratio)
      << "chunk " << chunk_ratio << " trial " << planes_apart;
  EXPECT_LT(std::abs(planes_apart - chunk_ratio), std::abs(one_block - chunk_ratio))
      << "chunk " << chunk_ratio << " one block " << one_block << " planes " << planes_apart;
  // Chains without a final shuffle are measured as encode() codes them.
  const Chain delta = chain_of({{Step::kDelta, 1}});
  out.clear();
  ASSERT_TRUE(encode(delta, l, sample.data(), sample.size(), out));
  EXPECT_EQ(trial_size(delta, l, sample.data(), sample.size()), out.size());
}

// A clock for the selector's trials: each trial reads it twice (start, end); every third
// trial, from the phase'th on, takes a second (a core taken by another process), the others
// a microsecond.
int g_clock_phase = 0;
long g_clock_reads = 0;
double flaky_clock() {
  static double now = 0;
  const long trial = g_clock_reads++ / 2;
  if (g_clock_reads % 2 == 0) now += (trial % 3 == g_clock_phase) ? 1.0 : 1e-6;
  return now;
}
double steady_clock() {
  static double now = 0;
  return now += 1e-6;
}

// One slow timing must not drop a candidate below the speed floor: the chain chosen with
// a clock that is slow for every third trial is the one a steady clock gives, whichever
// trial the slow ones hit.
TEST(TypedCodec, SelectorChoiceSurvivesOneSlowTiming) {
  const Layout l{"F64LE", {256}};
  std::vector<uint8_t> in = as_dtype(smooth(1 << 16, 256), "F64LE");
  std::vector<uint8_t> dec = as_dtype(decimal(1 << 16, 256), "F64LE");
  for (const std::vector<uint8_t>* data : {&in, &dec}) {
    SelectOptions steady;
    steady.cpu_seconds = steady_clock;
    const std::string want = select_chain(l, data->data(), data->size(), steady).name;
    ASSERT_NE(want, "zstd-3");  // a typed chain wins: there is a choice to lose
    for (int phase = 0; phase < 3; ++phase) {
      SelectOptions flaky;
      flaky.cpu_seconds = flaky_clock;
      g_clock_phase = phase;
      g_clock_reads = 0;
      EXPECT_EQ(select_chain(l, data->data(), data->size(), flaky).name, want) << "phase " << phase;
    }
  }
}

// A clock for which every trial takes g_trial_s seconds; g_timed_reads counts its reads.
double g_trial_s = 1;
long g_timed_reads = 0;
double timed_clock() {
  static double now = 0;
  return now += (g_timed_reads++ % 2) ? g_trial_s : 0.0;
}

// The speeds of a job's earlier trials stand for a plan (chain_speeds.h). Every finalist
// of this trial codes 128 KiB; the job's earlier trials timed them at 400 MB/s, this one
// at 250 (a busy core): below the 300 MB/s floor, but within twice the job's speed, so
// they pass it as they did, the choice is the steady one's, and nothing is timed again.
// Without the job's speeds every finalist under the floor is timed twice more. A
// timing of a tenth of the job's speed is not raised past twice itself: the floor holds.
TEST(TypedCodec, SelectorTakesAPlansBestSpeedFromTheJobsEarlierTrials) {
  const Layout l{"F64LE", {256}};
  const std::vector<uint8_t> in = as_dtype(smooth(1 << 16, 256), "F64LE");
  const double trial_mb = (128 << 10) / 1e6;
  ChainSpeeds speeds;
  SelectOptions opt;
  opt.cpu_seconds = timed_clock;
  opt.speeds = &speeds;
  g_trial_s = trial_mb / 400;
  std::string want;
  for (int job_trials = 0; job_trials < 3; ++job_trials)
    want = select_chain(l, in.data(), in.size(), opt).name;
  ASSERT_NE(want, "zstd-3");
  g_trial_s = trial_mb / 250;
  g_timed_reads = 0;
  const Chain busy = select_chain(l, in.data(), in.size(), opt);
  EXPECT_EQ(busy.name, want);
  EXPECT_NEAR(busy.sample_mbps, 400, 1);
  const long with_speeds = g_timed_reads;
  opt.speeds = nullptr;
  g_timed_reads = 0;
  EXPECT_NEAR(select_chain(l, in.data(), in.size(), opt).sample_mbps, 250, 1);
  EXPECT_LT(with_speeds, g_timed_reads);  // the retimes
  opt.speeds = &speeds;
  g_trial_s = trial_mb / 40;
  EXPECT_LT(select_chain(l, in.data(), in.size(), opt).sample_mbps, 81);
}

TEST(TypedCodec, SelectorNeverLosesMoreThanTwoPercentToZstd3OnHardData) {
  std::mt19937_64 g(11);
  std::vector<uint8_t> bytes(1 << 20);
  for (auto& b : bytes) b = static_cast<uint8_t>(g());
  std::vector<uint8_t> floats = as_dtype(random_values(1 << 18, 9), "F32LE");
  std::vector<uint8_t> doubles = as_dtype(random_values(1 << 17, 10), "F64LE");
  std::vector<double> walk(1 << 17);
  double x = 0;
  for (double& v : walk) v = x += std::normal_distribution<double>(0, 1)(g);
  std::vector<uint8_t> particles = as_dtype(walk, "F64LE");
  for (auto [dtype, data] :
       {std::pair{"bytes", &bytes}, std::pair{"F32LE", &floats}, std::pair{"F64LE", &doubles},
        std::pair{"F64LE", &particles}, std::pair{"F32LE", &bytes}}) {
    Layout l{dtype, {}};
    Chain c = select_chain(l, data->data(), data->size());
    EXPECT_GE(ratio(c, l, *data), 0.98 * ratio(bytes_chain(3), l, *data)) << dtype << " " << c.name;
  }
}

}  // namespace
}  // namespace ckptfwd::codec

namespace ckptfwd::codec {
namespace {

// With CKPTFWD_WRITE_CODEC_SEEDS=DIR, writes the fuzz seeds of tests/fuzz/seeds/codec/:
// a 2-byte little-endian raw size, then a kChain chunk (fuzz_codec.cc's input format).
// Chunks written before the block decoder (chain_decode.cc) and the SSE2 transforms: they
// may already be in stores, so they must still decode to the same bytes. The data: 261
// big-endian decimal values in rows of 16, then 2 tail bytes. The names are the headers'
// (a step that does not apply is left out: no shuffle of 1-byte dictionary indices).
std::vector<uint8_t> golden_data(bool f64) {
  const uint32_t elem = f64 ? 8 : 4;
  std::vector<uint8_t> out;
  for (int i = 0; i < 261; ++i) {
    double v = double((i % 16) * 3 + (i / 16) * 7 + (i % 5)) / 10.0;
    uint8_t b[8];
    if (f64) {
      memcpy(b, &v, 8);
    } else {
      float f = float(v);
      memcpy(b, &f, 4);
    }
    for (uint32_t k = 0; k < elem; ++k) out.push_back(b[elem - 1 - k]);
  }
  out.push_back(0xAB);
  out.push_back(0xCD);
  return out;
}

struct GoldenChunk {
  bool f64;
  const char* chain;
  const char* hex;
};
const GoldenChunk kGolden[] = {
    {false, "native+fixed(e=1)+lorenzo+zigzag+shuffle+zstd-1",
     "434b4348010304000000010110000000000000001604000000000000040100020104000000000000"
     "000008010900010128b52ffd601603b50200c40200080808080110000000090a1000100010000609"
     "100a1000100010000609100a10001000100006091000abcd12000b71258085818c818c818c818c81"
     "8c818c818c818c818c818c818c818c818c32250310022e70"},
    {false, "native+delta+zigzag+shuffle+zstd-1",
     "434b434801030400000001011000000000000000160400000000000003010005010900010128b52f"
     "fd601603150b0056163e28a02549073fafa631ee46bbdf55d11893351a88a360a7351b5e5386dfe9"
     "576c8c238cc620ec88253233002e002c00467663e9c2466ed4596ca3469de378d856d8b6a2ce318b"
     "41b8816ca3e31c731c07d3c846b31c732a118d90d19cc59cc244972b7d311333b16f5b98d8be2d4c"
     "cccaead311420af4d427b33cbdc9d8e8e94718dbe8f1a7a67fa170a623fe4553bf08563c38e5ee50"
     "6b9b38c43450eed05a9bc0c3e2f1787c33f16f1f3ffefdb1ef315fccea33abfd2313ab896f1b8e03"
     "851452482155500881622406c6308631cc08031223dc19304b0805cc0a0766895901812556b80449"
     "e10c0d7067680dc09d621070a7dcddc1da363d209083a6700c300acbb88c651c650c931696b18ccb"
     "58c638d92547c30d7346eb4d6e5d0c9d416957086daf58c63226a3ccc8f62dc0c2c7c20526a5e89b"
     "6cbd98997597b4d62a5c179c7db091b403188938d848daa50de4096b2c118300c9d50687c10a067b"
     "06"},
    {false, "native+xor+shuffle+zstd-1",
     "434b434801030400000001011000000000000000160400000000000003010006000900010128b52f"
     "fd601603850d00269853366049db06d6147b1510d0968388d22ac3c145f8449898c34418af828240"
     "854d2129a3d6c2238a8ad0a24070c078b62fb6b9d9b419d9293e004600490094e6fc8d3df7fd7c29"
     "f6ff4be7cdedf8bfb155ad5faa9ff5b297a99ab5da4b65ed64f9f7ac93bd54b3d6eb9adaf2abed5f"
     "b65afe6febac2eedd634b5d5014f0181f179849367f1908c0810d93c8f14f72c1e0ef76003d18247"
     "0aa3b178381a26e06790708814c6d31e8e067fcf9000637a3ddf9f34dffc77527af3bdf7b17f4ffa"
     "37df198d49106acc59e283205d6b30106a0e6389cf9b496b3804d49c0aa481934c732a54f3140e5c"
     "c2a9c868c1231515149154c02a327a8748c57788e4e46120a3a768a8f8bc919367e1160456d5cdba"
     "59b3ee6e8aeaa69aeaee66013ae148e0000641a94920d40440a9398c742d72a03910c2b588847004"
     "20c8b4880499f61490208838e9128e0421008fb33c604eba3820a083d41882629c89063a0008ccb0"
     "01b3216ff84000c5c847f8c67190a23387430d77c71b0c64da917670823bdce11eee70872b9b2b8f"
     "56768793dbe3a65d375b1334012e38873bdce11eee70b275e5d164f770723beeb4ebb4b5316f30"},
    {false, "native+dict+prevrow+zigzag+zstd-1",
     "434b4348010304000000010110000000000000001604000000000000030100030001590000000000"
     "00000701010128b52ffd606b01bd0b00265c54343053920e905ec259c4a3e69f49fa169451c977ff"
     "4ca80d11732f37652cc4f34285674af0959a9a651836a287dbef3699bce36e294600460046006d81"
     "d12e4aad65c29a0863ad6d8d729433878e7267d01d42e9a04387d24187d24129217328217397d249"
     "099d41099db953d249e8d049e8ce9c728e4439479128e71cc931c634887ec19a5da8e5169966d17a"
     "056b4ea1965120fa446b13acb944a649207a446b116a3944a641a8e50f88d6d01a835a9eb0e6914c"
     "bb35223a843583a8e50f44b75d76202e8c0509d43a82f60758bb01c483a8f5029927c0da3f103fa0"
     "bd80cc27d61e40ad5f7b25f300102f51eb6ddd432df3c8b40ed69c432de3687d8335dbc8740d44d3"
     "683d432dcbc8748c4dc53da8f50eed39207e036bcf90790c6afd427b0b88afa0d627ac9d02e227b4"
     "1fc9bc04d67eb5eef622998f8078086afd417b07ac1d11df20f321ac9d41fb05995780f810004070"
     "400ad8061c57700238001a40064000084c815cad9240035a390cf0a8b4130a"},
    {true, "native+fixed(e=1)+delta+zigzag+shuffle+zstd-1",
     "434b4348010308000000010110000000000000002a08000000000000040100020104000000000000"
     "000005010900010128b52ffd6016039d020074020008080808014949084908490853014908490849"
     "0849085301490849084908490853014900abcd13000b71258085818c818c818c818c818c818c818c"
     "818c818c818c818c818c818c3225036c2d85612b70"},
    {true, "native+lorenzo+zigzag+shuffle+zstd-1",
     "434b4348010308000000010110000000000000002a0800000000000003010008010900010128b52f"
     "fd602a07450c00b61c47298027493a80a2080cf39bca2ac06a40b009a6232bfa7127cc40ef6d03b2"
     "0054088d6144967842b64c01400038003c00f57d60f2b2f897c5ca7198dcca6fa57224a75be7ad95"
     "2379c984fa6c613a92fb22417c0b0d212f26480c242f0bb4c4592c8034398a281009777808274b40"
     "8c1c67ff68978f787767a2e1399e7db6254b777877b2641b8220907ac915d73d1509e516f71509a5"
     "75fdca7e5c42699d77dd0f44904578c9e36f07c6d4b4605c2480003a2868b0390815a182c1180e07"
     "0cccecccff1cd325a6bfed301962de9986f76d7867e6c90e2f93dde94f7667a63f1f93dd9f01ca82"
     "0307ee6f8cb9bda35ed53ff557bf85beead6a0dbf6731e95e9c6bc09604c15ce9f636ac330fc31df"
     "63d4170c74f89c6b90f1053000a13220d00229238731622898fa850a48bdec1280f87d2369bb1844"
     "a10877f9bce438ce03d50a426e0b152b2275b80810f4ad107c371bb9011410dbb8c82129366193bb"
     "7c48e4807a231a6103c4072e62883cc6f94a0bc9ed84912cce8de47669b33c05da4b2a7aff35ce"},
};

TEST(TypedCodec, ChunksOfEarlierVersionsStillDecode) {
  for (const GoldenChunk& g : kGolden) {
    std::vector<uint8_t> chunk;
    for (const char* h = g.hex; h[0] && h[1]; h += 2)
      chunk.push_back(static_cast<uint8_t>(std::stoul(std::string(h, 2), nullptr, 16)));
    EXPECT_EQ(describe_payload(chunk.data(), chunk.size()), g.chain);
    std::vector<uint8_t> want = golden_data(g.f64), got(want.size());
    ASSERT_TRUE(chain_codec().decompress(chunk.data(), chunk.size(), got.data(), got.size()))
        << g.chain;
    EXPECT_EQ(got, want) << g.chain;
  }
}

// The seeds of fuzz_codec (tests/fuzz/seeds/codec/: a u16 raw size, then a kChain chunk)
// are chunks of these chains: each must still decode to the data it was made from (the
// quantized one within its bound). CKPTFWD_WRITE_CODEC_SEEDS=DIR writes them anew.
TEST(TypedCodec, FuzzSeedsDecodeToTheirData) {
  const char* dir = getenv("CKPTFWD_WRITE_CODEC_SEEDS");
  std::vector<uint8_t> dec = as_dtype(decimal(300, 20), "F32BE");
  std::vector<uint8_t> specials = special_floats(200, true, false);
  std::vector<uint8_t> led = as_dtype(led_records(12), "F64LE");
  Chain lossy = chain_of({{Step::kQuant}, {Step::kDelta, 1}, {Step::kShuffle}});
  lossy.lossy = LossyBound{0.01, 0};
  Chain lossy_wavelet = chain_of({{Step::kQuant}, {Step::kWavelet, 3}, {Step::kShuffle}});
  lossy_wavelet.lossy = LossyBound{0.01, 0};
  std::vector<uint8_t> wave = as_dtype(smooth(300, 20), "F64LE");
  struct Seed {
    const char* name;
    Chain chain;
    Layout layout;
    const std::vector<uint8_t>* data;
  } seeds[] = {
      {"fixed_lorenzo",
       chain_of({{Step::kSwap}, {Step::kFixed, 2}, {Step::kLorenzo, 1}, {Step::kShuffle}}),
       {"F32BE", {20}},
       &dec},
      {"dict_delta",
       chain_of({{Step::kSwap}, {Step::kDict}, {Step::kDelta, 1}}),
       {"F32BE", {20}},
       &dec},
      {"prevrow_bytedelta_zlib",
       chain_of({{Step::kPrevRow, 0}, {Step::kShuffle}, {Step::kByteDelta}}, Entropy::kZlib, 6),
       {"F32BE", {20}},
       &dec},
      {"xor_none", chain_of({{Step::kXor}}, Entropy::kNone, 0), {"F64LE", {}}, &specials},
      {"columns_delta",
       chain_of({{Step::kColumns}, {Step::kDelta, 1}, {Step::kShuffle}}),
       {"F64LE", {5}},
       &specials},
      {"quant", lossy, {"F64LE", {}}, &specials},
      {"fixed_lorenzo3d",
       chain_of({{Step::kSwap}, {Step::kFixed, 2}, {Step::kLorenzo3, 1}, {Step::kShuffle}}),
       {"F32BE", {4, 5}},
       &dec},
      {"bytes_zstd3", bytes_chain(3), {"bytes", {}}, &dec},
      {"records_delta",
       chain_of({{Step::kRecords}, {Step::kDelta, 1}, {Step::kShuffle}}),
       {"F64LE", {}},
       &led},
      {"quant_wavelet", lossy_wavelet, {"F64LE", {20}}, &wave},
  };
  for (const Seed& s : seeds) {
    if (dir) {
      std::vector<uint8_t> out = {static_cast<uint8_t>(s.data->size()),
                                  static_cast<uint8_t>(s.data->size() >> 8)};
      ASSERT_TRUE(encode(s.chain, s.layout, s.data->data(), s.data->size(), out)) << s.name;
      FILE* f = fopen((std::string(dir) + "/" + s.name).c_str(), "wb");
      ASSERT_NE(f, nullptr);
      fwrite(out.data(), 1, out.size(), f);
      fclose(f);
    }
    std::string path = std::string(CKPTFWD_SOURCE_DIR) + "/tests/fuzz/seeds/codec/" + s.name;
    FILE* f = fopen(path.c_str(), "rb");
    ASSERT_NE(f, nullptr) << path;
    std::vector<uint8_t> seed(1 << 20);
    seed.resize(fread(seed.data(), 1, seed.size(), f));
    fclose(f);
    ASSERT_GE(seed.size(), 2u) << path;
    size_t raw_n = seed[0] | (static_cast<size_t>(seed[1]) << 8);
    ASSERT_EQ(raw_n, s.data->size()) << path;
    std::vector<uint8_t> back(raw_n);
    const Codec* chain = codec_by_id(static_cast<uint8_t>(CodecId::kChain));
    ASSERT_TRUE(chain->decompress(seed.data() + 2, seed.size() - 2, back.data(), raw_n)) << path;
    if (!s.chain.lossy) {
      EXPECT_TRUE(back == *s.data) << path;
      continue;
    }
    for (size_t k = 0; k + 8 <= raw_n; k += 8) {
      double a, b;
      memcpy(&a, s.data->data() + k, 8);
      memcpy(&b, back.data() + k, 8);
      if (std::isfinite(a))
        EXPECT_LE(std::fabs(a - b), 0.01) << path << " value " << k / 8;
      else
        EXPECT_EQ(memcmp(&a, &b, 8), 0) << path << " value " << k / 8;
    }
  }
}

// A quick trial (SelectOptions::quick_block: the common candidates on one small block, for a
// variable whose full trial waits) picks a chain that is exact and, on smooth and decimal
// fields, stores within a few percent of what the full trial's chain stores, far less than
// zstd -3; on noise it stores within 3 % of zstd -3.
TEST(TypedCodec, AQuickTrialChoosesNearlyAsWellAsTheFullOne) {
  for (const char* dtype : {"F64LE", "F32BE"})
    for (int kind = 0; kind < 3; ++kind) {
      const size_t row = 128, n = row * 512;
      // A field with no row that repeats another (smooth() repeats its rows' shape, which
      // a block of four rows cannot show), slightly noisy, or rounded to two decimals.
      std::vector<double> v = random_values(n, 7);
      std::mt19937_64 g(11);
      std::normal_distribution<double> noise(0, 0.01);
      for (size_t i = 0; kind < 2 && i < n; ++i) {
        const double x = double(i % row), y = double(i / row);
        v[i] = 280 + 10 * std::sin(x / 9 + y / 7) * std::cos(y / 23 + x / 31) + noise(g);
        if (kind == 1) v[i] = std::round(v[i] * 100) / 100;
      }
      const std::vector<uint8_t> in = as_dtype(v, dtype);
      const Layout l{dtype, {n / row, row}};
      SelectOptions quick;
      quick.quick_block = 16 << 10;  // the most the forwarder gives (trial_budget.h)
      const Chain q = select_chain(l, in.data(), in.size(), quick);
      const Chain full = select_chain(l, in.data(), in.size());
      expect_round_trip(q, l, in, std::string(dtype) + " quick " + q.name);
      const double rq = ratio(q, l, in), rf = ratio(full, l, in), r3 = ratio(bytes_chain(3), l, in);
      if (kind < 2) {
        EXPECT_GT(rq, 0.93 * rf) << dtype << " " << kind << ": " << q.name << " vs " << full.name;
        EXPECT_GT(rq, 1.2 * r3) << dtype << " " << kind << ": " << q.name;
      } else {
        EXPECT_GT(rq, 0.97 * r3) << dtype << " noise: " << q.name;
      }
    }
}

}  // namespace
}  // namespace ckptfwd::codec
